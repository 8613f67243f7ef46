"""Wrapper bodies are code: no macro in wrappers/ hides a return or a block of
statements; a typed family may forward in one call (scripts/check_wrappers.py)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_wrappers", ROOT / "scripts" / "check_wrappers.py")
check_wrappers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_wrappers)


def test_tree_has_no_body_macro():
    assert list(check_wrappers.violations(ROOT)) == []


def test_body_macros_are_found(tmp_path):
    (tmp_path / "wrappers").mkdir()
    (tmp_path / "wrappers" / "w.c").write_text(
        "#define LIST(X) X(a) X(b)\n"
        "#define PROTO(n, T) int n(int id, const T *buf);\n"
        "#define FWD(n, T) \\\n"
        "  int n(int id, const T *buf) { return fwd(FN_##n, id, (const void *)buf); }\n"
        "/* #define COMMENTED(n) int n(void) { if (x) return 1; return 0; } */\n"
        "#define BODY(n) \\\n"
        "  int n(int fd) {                \\\n"
        "    int ret = real(fd);          \\\n"
        "    record(fd, ret);             \\\n"
        "    return ret;                  \\\n"
        "  }\n"
        "#define GUARD(x) if (!(x)) return -1\n"
        "#define MODE(flags, mode) if (flags) { va_list ap; va_start(ap, flags); va_end(ap); }\n")
    assert list(check_wrappers.violations(tmp_path)) == [
        "wrappers/w.c:6: macro BODY holds statements",
        "wrappers/w.c:12: macro GUARD holds statements",
        "wrappers/w.c:13: macro MODE holds statements",
    ]
