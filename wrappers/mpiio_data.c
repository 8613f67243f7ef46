/* MPI-IO read/write wrappers: the blocking families (independent and
 * collective, each in its individual-pointer, explicit-offset and shared or
 * ordered forms) and the split collectives' begin, with their MPI-4
 * large-count twins (_c, MPI_Count elements).  Each is the same short body:
 * guard, clock, real call, clock, then mpiio_record_rw with the call's facts
 * (kind, direction, count, datatype).  The nonblocking forms and the
 * split-collective ends are in mpiio_req.c. */
#include "mpiio_internal.h"

/* ---- individual, explicit offset, shared pointer ------------------------ */

MPI_WRAP(int, MPI_File_read, (MPI_File fh, void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write,
         (MPI_File fh, const void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_at,
         (MPI_File fh, MPI_Offset o, void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_at)(fh, o, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_at)(fh, o, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_at,
         (MPI_File fh, MPI_Offset o, const void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_at)(fh, o, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_at)(fh, o, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_shared,
         (MPI_File fh, void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_shared)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_shared)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_shared,
         (MPI_File fh, const void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_shared)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_shared)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

/* ---- collective ----------------------------------------------------------- */

MPI_WRAP(int, MPI_File_read_all, (MPI_File fh, void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_all)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_all)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_all,
         (MPI_File fh, const void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_all)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_all)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_at_all,
         (MPI_File fh, MPI_Offset o, void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_at_all)(fh, o, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_at_all)(fh, o, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_at_all,
         (MPI_File fh, MPI_Offset o, const void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_at_all)(fh, o, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_at_all)(fh, o, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_ordered,
         (MPI_File fh, void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_ordered)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_ordered)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_ordered,
         (MPI_File fh, const void *buf, int n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_ordered)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_ordered)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

/* ---- split collectives: counted at begin, timed from begin to end ------- */

MPI_WRAP(int, MPI_File_read_all_begin, (MPI_File fh, void *buf, int n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_all_begin)(fh, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_all_begin)(fh, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_all_begin, (MPI_File fh, const void *buf, int n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_all_begin)(fh, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_all_begin)(fh, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_at_all_begin,
         (MPI_File fh, MPI_Offset o, void *buf, int n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_at_all_begin)(fh, o, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_at_all_begin)(fh, o, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_at_all_begin,
         (MPI_File fh, MPI_Offset o, const void *buf, int n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_at_all_begin)(fh, o, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_at_all_begin)(fh, o, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_ordered_begin, (MPI_File fh, void *buf, int n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_ordered_begin)(fh, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_ordered_begin)(fh, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_ordered_begin,
         (MPI_File fh, const void *buf, int n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_ordered_begin)(fh, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_ordered_begin)(fh, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

#if MPI_VERSION >= 4 /* large-count forms */

MPI_WRAP(int, MPI_File_read_c,
         (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_c)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_c)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_c)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_c)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_at_c,
         (MPI_File fh, MPI_Offset o, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_at_c)(fh, o, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_at_c)(fh, o, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_at_c,
         (MPI_File fh, MPI_Offset o, const void *buf, MPI_Count n, MPI_Datatype dt,
          MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_at_c)(fh, o, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_at_c)(fh, o, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_shared_c,
         (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_shared_c)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_shared_c)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_shared_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_shared_c)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_shared_c)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_INDEP, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_all_c,
         (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_all_c)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_all_c)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_all_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_all_c)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_all_c)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_at_all_c,
         (MPI_File fh, MPI_Offset o, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_at_all_c)(fh, o, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_at_all_c)(fh, o, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_at_all_c,
         (MPI_File fh, MPI_Offset o, const void *buf, MPI_Count n, MPI_Datatype dt,
          MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_at_all_c)(fh, o, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_at_all_c)(fh, o, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_ordered_c,
         (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_ordered_c)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_ordered_c)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_ordered_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_ordered_c)(fh, buf, n, dt, st);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_ordered_c)(fh, buf, n, dt, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_COLL, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_all_begin_c, (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_all_begin_c)(fh, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_all_begin_c)(fh, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_all_begin_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_all_begin_c)(fh, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_all_begin_c)(fh, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_at_all_begin_c,
         (MPI_File fh, MPI_Offset o, void *buf, MPI_Count n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_at_all_begin_c)(fh, o, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_at_all_begin_c)(fh, o, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_at_all_begin_c,
         (MPI_File fh, MPI_Offset o, const void *buf, MPI_Count n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_at_all_begin_c)(fh, o, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_at_all_begin_c)(fh, o, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_ordered_begin_c,
         (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_ordered_begin_c)(fh, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_read_ordered_begin_c)(fh, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_READ, ret, n, dt, buf, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_ordered_begin_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_ordered_begin_c)(fh, buf, n, dt);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_write_ordered_begin_c)(fh, buf, n, dt);
  double t1 = iochar_now();
  IOCHAR_RECORD(mpiio_record_rw(r, K_SPLIT, DIR_WRITE, ret, n, dt, buf, t0, t1));
  return ret;
}
#endif
