/* numoracle campaign under MPI: see mpi.h. */
#include "campaign/mpi.h"

#include <stdlib.h>

#if NMO_HAVE_MPI
#include <mpi.h>

static int active;

int nmo_camp_mpi_built(void) { return 1; }

int nmo_camp_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
    *rank = 0, *size = 1;
    /* only under a launcher: a plain `numoracle campaign` must not pay for (or fail at)
     * an MPI singleton start */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK")) return 0;
    /* the campaign forks its workers (and they fork mutant children) after MPI_Init;
     * they never call MPI, so OpenMPI's warning about fork() is noise */
    setenv("OMPI_MCA_mpi_warn_on_fork", "0", 0);
    if (MPI_Init(argc, argv) != MPI_SUCCESS) return 0;
    active = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 1;
}

int nmo_camp_mpi_allmax(int v)
{
    if (!active) return v;
    int r = v;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return r;
}

void nmo_camp_mpi_finalize(void)
{
    if (active) MPI_Finalize();
    active = 0;
}

#else

int nmo_camp_mpi_built(void) { return 0; }

int nmo_camp_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
    (void)argc, (void)argv;
    *rank = 0, *size = 1;
    return 0;
}

int nmo_camp_mpi_allmax(int v) { return v; }

void nmo_camp_mpi_finalize(void) {}

#endif
