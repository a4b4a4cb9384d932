/* numoracle campaign: run a program and capture its standard output — fork/exec with an
 * argument vector, never a shell, so no name in a config (work_dir, file names) is ever
 * parsed as shell syntax. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "campaign/spawn.h"

int nmo_camp_run_capture(const char *dir, char *const argv[], char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]), close(p[1]);
        return -1;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (dup2(p[1], STDOUT_FILENO) < 0 || (devnull >= 0 && dup2(devnull, STDERR_FILENO) < 0)) _exit(127);
        if (dir && chdir(dir) != 0) _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    size_t cap = 1 << 16, got = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (got + 4096 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(p[0], buf + got, cap - got - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            free(buf);
            return -1;
        }
    if (!buf) return -1;
    buf[got] = '\0';
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    *len = got;
    return 0;
}
