#!/usr/bin/env python3
"""Build step: the preset deflate dictionary of format-2 logs
(reports/iochar/log_dictionary.bin, the one file both writers and the reader
use) as a C header for runtime/log_buf.c."""
import sys

data = open(sys.argv[1], "rb").read()
rows = ",\n".join("  " + ", ".join(str(b) for b in data[i:i + 24]) for i in range(0, len(data), 24))
with open(sys.argv[2], "w") as f:
    f.write("/* Generated from reports/iochar/log_dictionary.bin by runtime/gen_log_dict.py. */\n")
    f.write(f"static const unsigned char iochar_log_dictionary[{len(data)}] = {{\n{rows}\n}};\n")
    f.write(f"static const unsigned long iochar_log_dictionary_len = {len(data)};\n")
