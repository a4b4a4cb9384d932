/* numoracle GPU layer: plugin isolation (issue 16.10). A plugin is someone else's code
 * in numoracle's process: a query or kernel that crashes, overruns its outputs, never
 * returns or hands back nonsense must become a clear error for that case, not take
 * numoracle down.
 *
 *  - nmo_plugin_probe: the plugin is first loaded, queried and its table validated in a
 *    forked child; only a plugin that passed there is loaded into numoracle itself.
 *  - nmo_plugin_table_check: every field of the capability table, bounded before it is
 *    read (sizes, counts, strings: NUL within a limit, UTF-8, no control characters;
 *    operators, names, dtypes, plans parsed).
 *  - nmo__host_launch: host kernels (supports() and launch()) run in a forked child per
 *    call, with a timeout; outputs live in shared memory between guard pages with a
 *    canary around them; the child's return code, message and time are validated.
 * Device plugins are probed, but their launches stay in-process: a GPU context does not
 * survive fork (the runner's device checks still apply). */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nmo_internal.h"
#include "nmo_runner.h"

/* ------------------------------------------------------------------ the table */

/* A string of the table: NUL within max bytes, UTF-8, no control characters. Reading up
 * to max bytes of a bad pointer faults, which is why the probe runs in a child. */
static const char *text_problem(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1);
    if (n > max) return "longer than numoracle's limit (or not NUL-terminated)";
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (u[i] < 0x20 || u[i] == 0x7f) return "holds a control character";
        size_t k = nmo__utf8_len(u + i, n - i);
        if (!k) return "is not UTF-8";
        i += k;
    }
    return NULL;
}

static int name_ok(const char *s)
{
    /* it follows plugin:PATH: on the command line and names the kernel in reports */
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-' || *s == '.' || *s == '+'))
            return 0;
    return 1;
}

/* Every token of a dtypes list is a dtype or IN>OUT (a token the runner cannot read was
 * silently never matched). */
static int dtypes_ok(const char *s, char *bad, size_t n)
{
    int any = 0;
    while (*s) {
        while (*s == ' ' || *s == ',') s++;
        const char *e = s;
        while (*e && *e != ' ' && *e != ',') e++;
        if (e == s) break;
        char tok[64];
        snprintf(bad, n, "%.*s", (int)(e - s), s);
        if ((size_t)(e - s) >= sizeof tok) return 0;
        memcpy(tok, s, (size_t)(e - s));
        tok[e - s] = '\0';
        char *gt = strchr(tok, '>');
        nmo_fmt a;
        if (gt) *gt = '\0';
        if (nmo_fmt_from_name(&a, tok) != NMO_OK || (gt && nmo_fmt_from_name(&a, gt + 1) != NMO_OK)) return 0;
        any = 1;
        s = e;
    }
    snprintf(bad, n, "(empty)");
    return any;
}

int nmo_plugin_table_check(const nmo_plugin_info *in, char *why, size_t wn)
{
    if (in->abi_version < NMO_PLUGIN_ABI_VERSION_MIN || in->abi_version > NMO_PLUGIN_ABI_VERSION) {
        snprintf(why, wn, "plugin ABI version %u, numoracle speaks %u to %u", in->abi_version,
                 NMO_PLUGIN_ABI_VERSION_MIN, NMO_PLUGIN_ABI_VERSION);
        return 1;
    }
    size_t ksz = in->abi_version >= 2 ? sizeof(nmo_plugin_kernel) : NMO_PLUGIN_KERNEL_SIZE_V1;
    if (in->struct_size < sizeof(nmo_plugin_info) || in->kernel_size < ksz) {
        snprintf(why, wn, "capability table smaller than ABI version %u defines", in->abi_version);
        return 1;
    }
    /* sizes beyond any real table: a kernel_size of 1 GiB made kernels[i] point anywhere */
    if (in->struct_size > NMO_PLUGIN_MAX_STRUCT || in->kernel_size > NMO_PLUGIN_MAX_STRUCT) {
        snprintf(why, wn, "capability table claims struct_size %u, kernel_size %u (numoracle's limit: %u bytes each)",
                 in->struct_size, in->kernel_size, (unsigned)NMO_PLUGIN_MAX_STRUCT);
        return 1;
    }
    if (in->memory != NMO_PLUGIN_MEM_HOST && in->memory != NMO_PLUGIN_MEM_DEVICE) {
        snprintf(why, wn, "bad memory kind");
        return 1;
    }
    if (in->n_kernels < 0 || (in->n_kernels > 0 && !in->kernels)) {
        snprintf(why, wn, "bad kernel table");
        return 1;
    }
    if (in->n_kernels > NMO_PLUGIN_MAX_KERNELS) {
        snprintf(why, wn, "%d kernels, over numoracle's limit of %d", in->n_kernels, NMO_PLUGIN_MAX_KERNELS);
        return 1;
    }
    const char *p;
    if (in->name && (p = text_problem(in->name, NMO_PLUGIN_MAX_TEXT))) {
        snprintf(why, wn, "plugin name %s", p);
        return 1;
    }
    if (in->version && (p = text_problem(in->version, NMO_PLUGIN_MAX_TEXT))) {
        snprintf(why, wn, "plugin version %s", p);
        return 1;
    }
    if (in->provenance_json && (p = text_problem(in->provenance_json, NMO_PLUGIN_MAX_PROV))) {
        snprintf(why, wn, "provenance_json %s", p);
        return 1;
    }
    for (int i = 0; i < in->n_kernels; i++) {
        const nmo_plugin_kernel *k =
            (const nmo_plugin_kernel *)((const char *)in->kernels + (size_t)i * in->kernel_size);
        if (!k->op || !k->name || !k->dtypes || !k->launch) {
            snprintf(why, wn, "kernel #%d lacks op, name, dtypes or launch", i);
            return 1;
        }
        if ((p = text_problem(k->name, 128)) || !name_ok(k->name)) {
            snprintf(why, wn, "kernel #%d: name %s", i, p ? p : "is not 1-128 characters of A-Z a-z 0-9 _ - . +");
            return 1;
        }
        if ((p = text_problem(k->op, 128))) {
            snprintf(why, wn, "kernel %s: op %s", k->name, p);
            return 1;
        }
        if (!nmo_op_find(k->op)) {
            snprintf(why, wn, "kernel %s: unknown op '%s' (see numoracle ops)", k->name, k->op);
            return 1;
        }
        char bad[80];
        if ((p = text_problem(k->dtypes, NMO_PLUGIN_MAX_TEXT))) {
            snprintf(why, wn, "kernel %s: dtypes %s", k->name, p);
            return 1;
        }
        if (!dtypes_ok(k->dtypes, bad, sizeof bad)) {
            snprintf(why, wn, "kernel %s: bad dtype '%s' in dtypes '%.200s'", k->name, bad, k->dtypes);
            return 1;
        }
        if (k->plan) {
            nmo_plan pl;
            nmo_err e = {{0}};
            nmo_plan_default(&pl, NMO_FP32);
            if ((p = text_problem(k->plan, NMO_PLUGIN_MAX_TEXT))) {
                snprintf(why, wn, "kernel %s: plan %s", k->name, p);
                return 1;
            }
            if (nmo_plan_parse(&pl, k->plan, &e) != NMO_OK) {
                snprintf(why, wn, "kernel %s declares a bad plan: %s", k->name, e.msg);
                return 1;
            }
        }
        if (k->desc && (p = text_problem(k->desc, NMO_PLUGIN_MAX_TEXT))) {
            snprintf(why, wn, "kernel %s: desc %s", k->name, p);
            return 1;
        }
        if (k->correct != 0 && k->correct != 1) {
            snprintf(why, wn, "kernel %s: correct is %d (0 or 1)", k->name, (int)k->correct);
            return 1;
        }
        for (int j = 0; j < i; j++) {
            const nmo_plugin_kernel *o =
                (const nmo_plugin_kernel *)((const char *)in->kernels + (size_t)j * in->kernel_size);
            /* plan: NAME picks among the kernels of the case's op: (op, name) is the key */
            if (strcmp(o->name, k->name) == 0 && strcmp(o->op, k->op) == 0) {
                snprintf(why, wn, "kernel name %s appears twice for op %s (kernels #%d and #%d)", k->name, k->op, j, i);
                return 1;
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ children */

nmo_status nmo_plugin_timeout(double *sec, nmo_err *err)
{
    *sec = NMO_PLUGIN_TIMEOUT_DEFAULT;
    const char *v = getenv("NMO_PLUGIN_TIMEOUT");
    if (!v || !*v) return NMO_OK;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (*end || errno || !(d > 0) || d > 86400)
        return nmo_err_set(err, NMO_ERR_USAGE, "NMO_PLUGIN_TIMEOUT '%s': expected seconds in (0, 86400]", v);
    *sec = d;
    return NMO_OK;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run fn(ctx, wfd) in a forked child with a timeout. reply gets what the child wrote to
 * wfd (at most rn - 1 bytes, NUL-terminated). Returns 0 when the child exited with
 * status 0, else 1 with what happened in why ("crashed (signal 11: Segmentation
 * fault)", "did not return within 2 s; killed", "exited with status 3"). */
static int run_child(double timeout, void (*fn)(void *, int), void *ctx, char *reply, size_t rn, char *why, size_t wn)
{
    int fds[2];
    reply[0] = '\0';
    if (pipe(fds) != 0) {
        snprintf(why, wn, "pipe: %s", strerror(errno));
        return 1;
    }
    fflush(NULL); /* a child that calls exit() must not write the parent's buffers again */
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, wn, "fork: %s", strerror(errno));
        close(fds[0]), close(fds[1]);
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        /* a fault in plugin code kills the child by its signal: handlers the parent
         * installed (a sanitizer's, a crash reporter's) would turn it into an exit */
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
        fn(ctx, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    int timed_out = 0;
    double t_end = mono_s() + timeout;
    for (;;) {
        double left = t_end - mono_s();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pf = {fds[0], POLLIN, 0};
        int r = poll(&pf, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue; /* the deadline is checked above */
        char buf[512];
        ssize_t k = read(fds[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break; /* EOF: the child is gone (or closed the pipe) */
        size_t c = got + 1 < rn ? rn - 1 - got : 0;
        if ((size_t)k < c) c = (size_t)k;
        memcpy(reply + got, buf, c);
        got += c;
        reply[got] = '\0';
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int stt = 0;
    while (waitpid(pid, &stt, 0) < 0 && errno == EINTR) {}
    if (timed_out) {
        snprintf(why, wn, "did not return within %g s (NMO_PLUGIN_TIMEOUT); killed", timeout);
        return 1;
    }
    if (WIFSIGNALED(stt)) {
        snprintf(why, wn, "crashed (signal %d: %s)", WTERMSIG(stt), strsignal(WTERMSIG(stt)));
        return 1;
    }
    if (!WIFEXITED(stt) || WEXITSTATUS(stt) != 0) {
        snprintf(why, wn, "ended the process (exit status %d) instead of returning", WEXITSTATUS(stt));
        return 1;
    }
    return 0;
}

static void write_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        s += k, n -= (size_t)k;
    }
}

static void probe_child(void *ctx, int wfd)
{
    const char *path = ctx;
    char why[512];
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        /* the parent's own dlopen reports dlerror's text */
        write_all(wfd, "OK");
        return;
    }
    nmo_plugin_query_fn q;
    *(void **)&q = dlsym(h, NMO_PLUGIN_QUERY_SYMBOL);
    const nmo_plugin_info *in = q ? nmo_plugin_query_any(q) : NULL;
    if (!in || !nmo_plugin_table_check(in, why, sizeof why)) write_all(wfd, "OK"); /* the parent says why */
    else write_all(wfd, why);
}

int nmo_plugin_probe(const char *path, char *why, size_t wn)
{
    double tmo;
    nmo_err e = {{0}};
    if (nmo_plugin_timeout(&tmo, &e) != NMO_OK) {
        snprintf(why, wn, "%s", e.msg);
        return 1;
    }
    char reply[512], how[256];
    if (run_child(tmo, probe_child, (void *)path, reply, sizeof reply, how, sizeof how)) {
        snprintf(why, wn, "loading or querying the plugin %s", how);
        return 1;
    }
    if (strcmp(reply, "OK") != 0) {
        snprintf(why, wn, "%s", reply[0] ? reply : "the probe said nothing");
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ host launches */

#define CANARY 0xA5 /* around every output: any other byte there was written by the kernel */

typedef struct {
    int stage;          /* 1 in supports(), 2 in launch(), 3 returned */
    int supported;
    int rc;
    double ms;
    char msg[512];
} shared_hdr;

typedef struct {
    const nmo_staged *s;
    const nmo_plugin_kernel *k;
    shared_hdr *h;
    nmo_plugin_tensor tout[NMO_MAX_TENSORS];
} launch_ctx;

static void launch_child(void *ctx, int wfd)
{
    (void)wfd;
    launch_ctx *c = ctx;
    nmo_plugin_args a = c->s->args;
    a.out = c->tout;
    c->h->stage = 1;
    c->h->supported = !c->k->supports || c->k->supports(&a);
    if (!c->h->supported) {
        c->h->stage = 3;
        return;
    }
    c->h->stage = 2;
    double t0 = mono_s();
    c->h->rc = c->k->launch(&a, c->h->msg, sizeof c->h->msg);
    c->h->ms = (mono_s() - t0) * 1e3;
    c->h->stage = 3;
}

static size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

nmo_status nmo__host_launch(nmo_staged *s, const nmo_plugin_kernel *k, nmo_run_info *info, nmo_err *err)
{
    double tmo;
    NMO_RETURN_IF_ERR(nmo_plugin_timeout(&tmo, err));
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    const int n_out = s->args.n_out;
    /* [header][guard] then per output [pages holding the buffer at their end][guard] */
    size_t off[NMO_MAX_TENSORS], area[NMO_MAX_TENSORS];
    size_t total = round_up(sizeof(shared_hdr), pg) + pg;
    for (int o = 0; o < n_out; o++) {
        area[o] = round_up(s->bytes_out[o] + 64, pg);
        off[o] = total;
        total += area[o] + pg;
    }
    unsigned char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nmo_err_set(err, NMO_ERR_NOMEM, "kernel %s: no shared memory for its outputs", k->name);
    nmo_status st = NMO_OK;
    launch_ctx c = {s, k, (shared_hdr *)m, {{0}}};
    memset(c.h, 0, sizeof *c.h);
    size_t start[NMO_MAX_TENSORS];
    int guards_ok = mprotect(m + round_up(sizeof(shared_hdr), pg), pg, PROT_NONE) == 0;
    for (int o = 0; o < n_out; o++) {
        guards_ok &= mprotect(m + off[o] + area[o], pg, PROT_NONE) == 0;
        memset(m + off[o], CANARY, area[o]);
        /* 64-byte aligned, ending less than 64 bytes before the guard page */
        start[o] = (off[o] + area[o] - s->bytes_out[o]) & ~(size_t)63;
        /* poisoned: unwritten elements read as NaN (the staged copy too: it is what a
         * declined or failed launch leaves) */
        memset(m + start[o], 0xFF, s->bytes_out[o]);
        memset(s->host_out[o], 0xFF, s->bytes_out[o]);
        c.tout[o] = s->tout[o];
        c.tout[o].data = m + start[o];
    }
    if (!guards_ok) {
        munmap(m, total);
        return nmo_err_set(err, NMO_ERR_GENERIC, "kernel %s: cannot set up guard pages: %s", k->name, strerror(errno));
    }
    char reply[8], how[256];
    int bad = run_child(tmo, launch_child, &c, reply, sizeof reply, how, sizeof how);
    shared_hdr h = *c.h;
    h.msg[sizeof h.msg - 1] = '\0';
    /* the message goes into reports: printable UTF-8 only */
    for (size_t i = 0; h.msg[i];) {
        size_t l = nmo__utf8_len((unsigned char *)h.msg + i, strlen(h.msg + i));
        if (!l || (unsigned char)h.msg[i] < 0x20 || h.msg[i] == 0x7f) h.msg[i++] = '?';
        else i += l;
    }
    const char *where = h.stage == 1 ? ", in supports()" : h.stage == 2 ? ", in launch()" : "";
    if (bad) {
        st = nmo_err_set(err, NMO_ERR_GENERIC, "kernel %s%s: %s", k->name, where, how);
    } else if (h.stage != 3) {
        st = nmo_err_set(err, NMO_ERR_GENERIC, "kernel %s%s: ended its process instead of returning", k->name, where);
    } else if (!h.supported) {
        info->skipped = 1;
        snprintf(info->why, sizeof info->why, "kernel %s does not support this case (shape, strides or parameters)",
                 k->name);
    } else if (h.rc != NMO_PLUGIN_OK && h.rc != NMO_PLUGIN_UNSUPPORTED && h.rc != NMO_PLUGIN_ERROR) {
        st = nmo_err_set(err, NMO_ERR_GENERIC,
                         "kernel %s returned %d, not NMO_PLUGIN_OK, NMO_PLUGIN_UNSUPPORTED or NMO_PLUGIN_ERROR", k->name,
                         h.rc);
    } else if (h.rc == NMO_PLUGIN_UNSUPPORTED) {
        info->skipped = 1;
        snprintf(info->why, sizeof info->why, "kernel %s declined this case%s%.400s", k->name, h.msg[0] ? ": " : "", h.msg);
    } else if (h.rc == NMO_PLUGIN_ERROR) {
        st = nmo_err_set(err, NMO_ERR_GENERIC, "kernel %s failed: %s", k->name, h.msg[0] ? h.msg : "(no message)");
    } else {
        /* returned OK: nothing outside the outputs may have changed */
        for (int o = 0; o < n_out && st == NMO_OK; o++) {
            size_t lo = off[o], hi = off[o] + area[o], b0 = start[o], b1 = start[o] + s->bytes_out[o];
            for (size_t i = lo; i < hi; i++) {
                if (i == b0) i = b1;
                if (i >= hi) break;
                if (m[i] != CANARY) {
                    st = nmo_err_set(err, NMO_ERR_GENERIC, "kernel %s wrote outside output %d (%s): byte %s%zu of it",
                                     k->name, o, s->c ? s->c->op->out[o].name : "?", i < b0 ? "-" : "+",
                                     i < b0 ? b0 - i : i - b1);
                    break;
                }
            }
        }
        for (int o = 0; o < n_out && st == NMO_OK; o++) memcpy(s->host_out[o], m + start[o], s->bytes_out[o]);
        info->kernel_ms = isfinite(h.ms) && h.ms >= 0 ? h.ms : 0;
    }
    munmap(m, total);
    return st;
}
