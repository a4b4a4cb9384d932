/* numoracle campaign under MPI (mpirun -n K numoracle campaign ...): each rank runs its
 * shard of the evaluation inputs (--shard R+1/K) into its own journal, rank 0 merges the
 * journals into one report once every rank is done. MPI is an existing distributed
 * engine (OpenMPI from Debian, optional: meson -Dmpi=auto); without it, or when the
 * program is not started by an MPI launcher, every function here is a no-op and the
 * campaign is the one-process campaign. */
#ifndef NMO_CAMPAIGN_MPI_H
#define NMO_CAMPAIGN_MPI_H

/* 1 if this build links MPI. */
int nmo_camp_mpi_built(void);

/* Started by an MPI launcher (OpenMPI's, or a PMI/PMIx one)? Then MPI_Init and fill
 * rank/size and return 1; else 0 (rank 0, size 1). Call after the ASLR re-exec. */
int nmo_camp_mpi_init(int *argc, char ***argv, int *rank, int *size);

/* Every rank's status, combined: the worst (largest) one; a barrier as well. */
int nmo_camp_mpi_allmax(int v);

void nmo_camp_mpi_finalize(void);

#endif
