"""The known-I/O pattern through mpi4py (tests/test_fortran.py): on 4 ranks, each writes its 4096
bytes of OUTDIR/mpi4py.dat with File.Write_at, then 4096 more at 16384 + rank * 4096 with the
collective File.Write_at_all, reads both back (Read_at, Read_at_all) and checks them, then
Bcast / Sendrecv / Allreduce as f_pattern.F90 does."""

import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, nprocs = comm.Get_rank(), comm.Get_size()
block = np.arange(rank * 1024 + 1, rank * 1024 + 1025, dtype=np.int32)
fh = MPI.File.Open(comm, f"{sys.argv[1]}/mpi4py.dat", MPI.MODE_CREATE | MPI.MODE_RDWR)
fh.Write_at(rank * block.nbytes, block)
fh.Write_at_all(nprocs * block.nbytes + rank * block.nbytes, block)
back = np.zeros_like(block)
fh.Read_at(rank * block.nbytes, back)
assert (back == block).all()
back[:] = 0
fh.Read_at_all(nprocs * block.nbytes + rank * block.nbytes, back)
assert (back == block).all()
fh.Close()
hdr = np.array([1, 2, 3, 4] if rank == 0 else [0, 0, 0, 0], dtype=np.int32)
comm.Bcast(hdr, root=0)
ring = np.zeros_like(block)
comm.Sendrecv(block, dest=(rank + 1) % nprocs, sendtag=7, recvbuf=ring, source=(rank - 1) % nprocs, recvtag=7)
total = np.zeros(1, dtype=np.int32)
comm.Allreduce(np.array([rank], dtype=np.int32), total)
assert total[0] == 6 and hdr[3] == 4
