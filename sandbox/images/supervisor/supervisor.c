/*
 * evalfleet-supervisor: the sandbox container's main process (pid 1).
 *
 * The host drives it over the container's attached stdin/stdout instead of `docker exec`,
 * so a run's sandbox-side steps cost a vfork + exec inside the container (~1 ms) rather
 * than an exec through dockerd, containerd and runc (~60-90 ms each).
 *
 * Trust boundaries (docs/operations.md, "Isolation"): the supervisor runs as uid 0 inside
 * the container with only CAP_SETUID, CAP_SETGID and CAP_KILL (the container is created
 * with every other capability dropped but CAP_SETPCAP, and no_new_privs; the supervisor
 * first empties the capability bounding set, then sheds CAP_SETPCAP itself, so nothing it
 * starts could ever regain a capability). Every command it starts runs as
 * the uid:gid its request names - the candidate (1000), the judge (65532) or the evaluator
 * (65533), never 0 - with no supplementary groups, no capabilities (setuid from root to a
 * non-zero uid clears the permitted and effective sets) and no_new_privs. So a candidate:
 *   - cannot signal or ptrace it (another uid, and no CAP_KILL / CAP_SYS_PTRACE);
 *   - cannot open its channel (/proc/1/fd/0 and 1 are root's, mode 0600), memory
 *     (/proc/1/mem), or change its limits (prlimit on another uid needs CAP_SYS_RESOURCE;
 *     the sandbox's seccomp profile refuses prlimit on any other pid besides);
 *   - learns nothing from /proc/1/environ: the supervisor re-executes itself with an
 *     empty environment before anything else, and every command's environment is exactly
 *     the one its request carries (built by the host), never inherited. (Under gVisor's
 *     2022 builds /proc/PID/environ is world-readable; there is nothing in it to read.)
 *   - cannot outlive a stop: 'K' is kill(-1, SIGKILL) from pid 1 with CAP_KILL, which
 *     reaches every process of every uid but pid 1, and cannot be raced.
 * It is also not dumpable (PR_SET_DUMPABLE 0), and every descriptor of its own is
 * close-on-exec: commands see only their stdio pipes.
 *
 * Protocol version 6 (images say so in the label evalfleet.supervisor.protocol; bump it
 * with sandbox/docker/channel.py's PROTOCOL on any change; 3 added 'C', 4 the arguments
 * --dirs-as and --collect, below, 5 the seed records, 6 queued requests and aimed stops):
 * frames of [type: 1 byte][length: 4 bytes, big endian][payload], both ways. Requests are
 * numbered from 1 in the order their 'R' frames arrive (refused ones too).
 * Host -> supervisor:
 *   'R' run: [flags: 1 byte][uid: 4][gid: 4] (big endian) [seed] workdir NUL
 *            (KEY=VALUE NUL)* NUL (argv NUL)+
 *            flags bit 0: stop every other process first; bit 1 (protocol 4): the
 *            command's stdin is /dev/null, not a pipe ('I' and 'E' are ignored); bit 2
 *            (protocol 5): [seed] is [length: 4][records], files the command's process
 *            writes into its workdir as its user before it becomes the command (see
 *            seed(); a failure is an 'f' starting "evalfleet-supervisor seed:"); one
 *            run at a time. Bit 3 (protocol 6): queued - see "Queued requests" below.
 *   'I' stdin bytes for the running command; 'E' end of its stdin.
 *   'K' stop every other process now (also while a command runs); with a payload
 *       [number: 4] (protocol 6), only while request <number> runs (else answered "0").
 *   'C' reset the sandbox to how it started, between runs (see "Reset" below).
 * Supervisor -> host:
 *   'o' / 'e' the command's stdout / stderr bytes;
 *   'x' the command ended: its exit status as decimal (128 + signal when killed); after
 *       137 (SIGKILL), protocol 6 adds " oom_kill=N", the sandbox cgroup's OOM kills so far
 *       (-1 where unreadable), so the host learns whether the memory limit did it without
 *       another request (the kernel counts an OOM kill before it sends the SIGKILL);
 *   'f' the command could not start: a message (runc's wording where it has one);
 *   's' a queued request was skipped (protocol 6);
 *   'k' stop finished: "0", or "1 <processes left>".
 *   'c' reset finished: "0 rounds=R cpu_ns=N oom_kill=K ms=T" (verified), or "1 <why not>".
 * A command has ended when its process has exited and its outputs closed, or DRAIN_MS
 * after its exit if background processes still hold them: those outputs are then read and
 * discarded (not closed, which would kill a chatty background server with SIGPIPE).
 * End of stdin (the host went away) ends the supervisor, and with it the container.
 *
 * Queued requests (protocol 6): an 'R' with flag bit 3 may come while a command runs; it
 * starts as soon as every request before it has ended, so that the host's round trip
 * between two steps of a run is not the sandbox's idle time. Every answer still comes in
 * request order. A queued request is skipped (answered 's') when the request before it
 * could not start ('f') or was skipped: the host then takes another way (seeding step by
 * step, say) and asks again. It must stop every process first and have /dev/null as its
 * stdin (flag bits 0 and 1; otherwise 'f'), so that a stop the host aimed at the request
 * before it ('K' with that request's number), arriving after that request ended, has
 * nothing left to do and is answered "0" without touching the one that started since.
 *
 * Arguments: [--reusable] [--dirs-as UID DIR...], or --collect (see collect(), not as
 * pid 1; an 'R' running this binary with --collect is served by pid 1 itself, acting as
 * the request's uid (collect_in_place), else by the forked process, without an exec).
 * --reusable: the sandbox may serve several runs (see "Reset"). --dirs-as: make
 * each DIR (mode 0755) as UID before anything else runs - the judge's room's parts, so
 * that no request forks mkdir for them (and the host starts a first test with nothing to
 * write without a shell); one that cannot be made ends the supervisor (a broken sandbox).
 * With --reusable they are part of the start every reset restores. Older supervisors
 * ignore what follows argv[1].
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <linux/capability.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAME (64u << 20)  /* a run request or a stdin chunk never exceeds this */
#define CHUNK 65536
#define DRAIN_MS 50            /* output still read after the command exited */
#define MAX_ORPHANS 64         /* outputs of finished commands kept open (see adopt) */
#define STOP_TRIES 2000        /* kill(-1) passes before giving up (~2 s) */

extern char **environ;
static int wake_pipe[2];
static char *inbuf;            /* frames read from the host, not yet handled */
static size_t inlen, incap;
static char *pending;          /* stdin bytes not yet written to the command */
static size_t pendlen, pendoff;

struct child {
    pid_t pid;
    int in, out, err;          /* our ends of its pipes, -1 when closed */
    int in_eof;                /* the host sent 'E' */
    int exited, status;
    struct timespec exited_at;
};
static struct child cur = {.pid = 0, .in = -1, .out = -1, .err = -1};

#define QUEUED 8        /* flag bit 3 of 'R': start when the requests before it have ended */
#define MAX_QUEUED 8    /* more queued at once is the host's bug: the supervisor ends */
static uint32_t requests;   /* 'R' frames received: the last request's number */
static uint32_t running;    /* the running command's request number (0: none) */
static int last_failed;     /* the last request handled could not start, or was skipped */
struct queued { char *payload; size_t len; uint32_t number; };
static struct queued queue[MAX_QUEUED];
static int nqueued;

static void die(const char *what) {
    fprintf(stderr, "evalfleet-supervisor: %s: %s\n", what, strerror(errno));
    _exit(70);
}

static void write_all(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) _exit(0);  /* the host is gone: so is the sandbox */
        p += n;
        len -= (size_t)n;
    }
}

static void send_frame(char type, const void *data, size_t len) {
    unsigned char head[5] = {(unsigned char)type, (unsigned char)(len >> 24),
                             (unsigned char)(len >> 16), (unsigned char)(len >> 8),
                             (unsigned char)len};
    write_all(1, head, sizeof head);
    if (len) write_all(1, data, len);
}

static void send_text(char type, const char *text) { send_frame(type, text, strlen(text)); }

static void on_child(int sig) {
    (void)sig;
    int saved = errno;
    char c = 0;
    (void)!write(wake_pipe[1], &c, 1);
    errno = saved;
}

static long ms_since(const struct timespec *t) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Reap every finished process (orphans come to pid 1); note the command's status. */
static void reap(void) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == cur.pid && !cur.exited) {
            cur.exited = 1;
            cur.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
            clock_gettime(CLOCK_MONOTONIC, &cur.exited_at);
        }
    }
}

/* kill(-1) from pid 1 reaches every process we may signal but ourselves. */
static void stop_others(char *answer, size_t size) {
    struct timespec pause = {0, 1000000};
    for (int i = 0; i < STOP_TRIES; i++) {
        kill(-1, SIGKILL);
        reap();
        if (kill(-1, 0) != 0) {  /* ESRCH: nobody left (EPERM: only other uids) */
            snprintf(answer, size, "0");
            return;
        }
        nanosleep(&pause, NULL);
    }
    snprintf(answer, size, "1 processes left after %d kill passes", STOP_TRIES);
}

static void report_stop(void) {
    char answer[80];
    stop_others(answer, sizeof answer);
    send_text('k', answer);
}

/* A run request, pointing into the frame it came in (valid until the frame is handled). */
struct request {
    int stop_first, null_stdin, seeds;
    uid_t uid;
    gid_t gid;
    const char *seed;    /* seed records (flag bit 2), in the frame's payload */
    size_t seed_len;
    char *workdir;
    char **env, **argv;  /* NULL-terminated, in one allocation (env's) */
};

/* In the child: drop to the request's uid:gid for good (no groups, no capabilities, no
 * new privileges); NULL when done, else what failed. */
static const char *drop_privileges(const struct request *req) {
    if (req->uid == 0 || req->gid == 0) return "refusing to run a command as root";
    if (setgroups(0, NULL) != 0) return "setgroups";
    if (setresgid(req->gid, req->gid, req->gid) != 0) return "setresgid";
    if (setresuid(req->uid, req->uid, req->uid) != 0) return "setresuid";
    if (getuid() != req->uid || geteuid() != req->uid) return "uid did not change";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "prctl(PR_SET_NO_NEW_PRIVS)";
    umask(022);  /* the same file modes every run, whatever the image (determinism) */
    return NULL;
}

static uint32_t be32(const char *p) {
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

/* A seed record's path: relative, every part a plain name (no "", ".", ".."). */
static int plain_path(const char *path) {
    if (*path == '\0' || *path == '/') return 0;
    for (const char *part = path; part; ) {
        const char *end = strchr(part, '/');
        size_t n = end ? (size_t)(end - part) : strlen(part);
        if (n == 0 || (n == 1 && part[0] == '.') || (n == 2 && !strncmp(part, "..", 2)))
            return 0;
        part = end ? end + 1 : NULL;
    }
    return 1;
}

/* Create a new file (never one that is there, never through a link) holding data. */
static int new_file(const char *path, mode_t mode, const char *data, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { int saved = n < 0 ? errno : ENOSPC; close(fd); errno = saved; return -1; }
        data += n;
        len -= (size_t)n;
    }
    return close(fd);
}

/* In the child, as the request's user, in its workdir: write the seed records, each
 * [type 'D' or 'F'][mode: 4][size: 4] path NUL [size bytes], parents first - what
 * `tar -x` of the same files does under umask 022 - into a place where none of them is
 * yet. NULL when done, else what failed (errno says why): anything already in the way,
 * or any other surprise, and the host seeds step by step (it clears the way, as tar). */
static const char *seed(const char *p, size_t len) {
    while (len > 0) {
        size_t plen = len > 9 ? strnlen(p + 9, len - 9) : 0;
        errno = EINVAL;
        if (len <= 9 || plen == len - 9 || !plain_path(p + 9)) return "bad record";
        size_t size = be32(p + 5), left = len - 9 - plen - 1;
        mode_t mode = be32(p + 1) & 0777;
        if (size > left) return "bad record";
        const char *path = p + 9, *data = path + plen + 1;
        if (p[0] == 'D' && size == 0) {
            if (mkdir(path, mode) != 0) return path;
        } else if (p[0] != 'F' || new_file(path, mode, data, size) != 0) {
            return p[0] == 'F' ? path : "bad record";
        }
        p = data + size;
        len = left - size;
    }
    return NULL;
}

/* seed(), a file past RLIMIT_FSIZE failing with EFBIG rather than killing the process
 * (which the host would take for the command's own death); the command gets SIGXFSZ's
 * default again. */
static const char *seed_ignoring_xfsz(const struct request *req) {
    signal(SIGXFSZ, SIG_IGN);
    const char *failed = seed(req->seed, req->seed_len);
    int saved = errno;
    signal(SIGXFSZ, SIG_DFL);
    errno = saved;
    return failed;
}

static int collect(FILE *out, int argc, char **argv);
static struct stat self_exe;  /* this binary (main() records it) */
static int collect_in_place(const struct request *req);

#define PROC_MAGIC 0x9fa0  /* PROC_SUPER_MAGIC */

/* Whether a capture of --collect's arguments (nonce, budget, cap, then "F path cap"...)
 * reaches /proc (through links too), where "self" is whoever reads it; or may: a path
 * statfs() cannot answer for but by its absence (gVisor answers ENOSYS for some files of
 * /proc). */
static int reaches_proc(char **args) {
    for (int a = 3; args[a] && args[a + 1]; a += 3) {
        struct statfs fs;
        if (statfs(args[a + 1], &fs) == 0 ? fs.f_type == PROC_MAGIC
                                          : errno != ENOENT && errno != ENOTDIR)
            return 1;
    }
    return 0;
}

/* Whether ``req`` runs this very binary with --collect and the forked child may collect
 * itself, without an exec (a large part of the request on runc, more on gVisor). It has
 * dropped its privileges as an exec'd one would, is not dumpable (its uid changed) and
 * runs nothing but collect(); the stream is the same. Not when a capture reaches /proc:
 * there /proc/self would be a copy of this supervisor (its memory map, its arguments), so
 * a fresh collector is exec'd, as before. */
static int is_collect(const struct request *req) {
    struct stat st;
    return req->argv[1] && !strcmp(req->argv[1], "--collect") && self_exe.st_ino != 0 &&
           stat(req->argv[0], &st) == 0 && st.st_dev == self_exe.st_dev &&
           st.st_ino == self_exe.st_ino;
}

static int collects_itself(const struct request *req) {
    return is_collect(req) && !reaches_proc(req->argv + 2);
}

/* In the child: the command's user, environment, directory and program (its seed files
 * written first); never returns. */
static __attribute__((noreturn)) void become(int err_fd, const struct request *req) {
    char message[512];
    const char *failed;
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    if ((failed = drop_privileges(req))) {
        snprintf(message, sizeof message, "evalfleet-supervisor: %s: %s", failed,
                 strerror(errno));
    } else if (chdir(req->workdir) != 0) {
        snprintf(message, sizeof message, "chdir to cwd (\"%s\") failed: %s", req->workdir,
                 strerror(errno));
    } else if (req->seeds && (failed = seed_ignoring_xfsz(req))) {
        snprintf(message, sizeof message, "evalfleet-supervisor seed: %s: %s", failed,
                 strerror(errno));
    } else if (collects_itself(req)) {
        close(err_fd);  /* started, as an exec closing it would say */
        int argc = 0;
        while (req->argv[argc]) argc++;
        _exit(collect(stdout, argc - 2, req->argv + 2));
    } else {
        environ = req->env;
        execvp(req->argv[0], req->argv);
        snprintf(message, sizeof message, "exec: \"%s\": %s", req->argv[0], strerror(errno));
    }
    (void)!write(err_fd, message, strlen(message));
    _exit(127);
}

/* In the new process: its stdio, then become() the command; never returns. */
static __attribute__((noinline, noreturn)) void start(const struct request *req, int in,
                                                      int out, int err, int status) {
    int null = req->null_stdin ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
    dup2(null >= 0 ? null : in, 0);
    dup2(out, 1);
    dup2(err, 2);
    become(status, req);
}

/* Whether the command's process may borrow this one's memory until it execs (vfork: no
 * page tables copied, and no copy-on-write faults here afterwards, a large part of a small
 * request): every request but --collect, whose process may collect itself instead of
 * exec'ing, and must then have memory of its own. The process writes only its own stack,
 * its descriptors, credentials and directory (its own after vfork) and ``environ``, which
 * run() puts back. */
static int may_share_memory(const struct request *req) {
    return !(req->argv[1] && !strcmp(req->argv[1], "--collect"));
}

#define RUN_HEAD 9  /* flags, uid, gid */

/* Split an 'R' payload: flags, uid, gid, [seed length: 4, seed records] (flag bit 2),
 * workdir NUL, (KEY=VALUE NUL)*, NUL, (argv NUL)+. */
static int parse_run(char *payload, size_t len, struct request *req) {
    size_t start = RUN_HEAD;
    if (len < RUN_HEAD) return -1;
    req->seeds = (payload[0] >> 2) & 1;
    if (req->seeds) {
        if (len < RUN_HEAD + 4 || be32(payload + RUN_HEAD) > len - RUN_HEAD - 4) return -1;
        req->seed = payload + RUN_HEAD + 4;
        req->seed_len = be32(payload + RUN_HEAD);
        start = RUN_HEAD + 4 + req->seed_len;
    }
    if (len < start + 2 || payload[len - 1] != '\0') return -1;
    size_t n = 0;
    for (size_t i = start; i < len; i++) n += payload[i] == '\0';
    char **fields = calloc(n + 2, sizeof *fields);
    if (!fields) die("out of memory");
    size_t k = 0, sep = 0;
    for (char *p = payload + start; p < payload + len; p += strlen(p) + 1) {
        if (*p == '\0' && k > 0 && sep == 0) { fields[k++] = NULL; sep = k; continue; }
        fields[k++] = p;
    }
    if (sep < 2 || sep >= k) { free(fields); return -1; }  /* no workdir, or no argv */
    req->stop_first = payload[0] & 1;
    req->null_stdin = (payload[0] >> 1) & 1;
    req->uid = (uid_t)be32(payload + 1);
    req->gid = (gid_t)be32(payload + 5);
    req->workdir = fields[0];
    req->env = fields + 1;
    req->argv = fields + sep;
    return 0;
}

static void close_pair(int fds[2]) { close(fds[0]); close(fds[1]); }

/* Four close-on-exec pipes (the child's stdin, stdout, stderr; its exec-error report). */
static int make_pipes(int in[2], int out[2], int err[2], int status[2]) {
    int *all[4] = {in, out, err, status};
    for (int i = 0; i < 4; i++) {
        if (pipe2(all[i], O_CLOEXEC) == 0) continue;
        while (i-- > 0) close_pair(all[i]);
        return -1;
    }
    return 0;
}

static void send_error(const char *what, int error) {
    char message[160];
    snprintf(message, sizeof message, "%s: %s", what, strerror(error));
    send_text('f', message);
}

/* Start the command of an 'R' frame: 1 when started, 0 when pid 1 served it itself (its
 * answer sent: collect_in_place), -1 when it could not start (answered 'f'). */
static int run(char *payload, size_t len) {
    struct request req = {0};
    if (parse_run(payload, len, &req) != 0) { send_text('f', "bad run request"); return -1; }
    if (req.stop_first) { char ignored[80]; stop_others(ignored, sizeof ignored); }
    if (collect_in_place(&req) == 0) { free(req.env - 1); return 0; }
    int in[2], out[2], err[2], status[2];
    if (make_pipes(in, out, err, status) != 0) {
        send_error("pipe", errno);
        free(req.env - 1);
        return -1;
    }
    char **own = environ;  /* become() points a vfork child's (our) environ elsewhere */
    pid_t pid = may_share_memory(&req) ? vfork() : fork();
    if (pid == 0) start(&req, in[0], out[1], err[1], status[1]);
    int saved = errno;
    environ = own;
    free(req.env - 1);
    close(in[0]); close(out[1]); close(err[1]); close(status[1]);
    if (pid < 0) {
        close(in[1]); close(out[0]); close(err[0]); close(status[0]);
        send_error("fork", saved);
        return -1;
    }
    char message[600];
    ssize_t got;
    while ((got = read(status[0], message, sizeof message - 1)) < 0 && errno == EINTR) {}
    close(status[0]);
    if (got > 0) {  /* exec failed: the child wrote why, and exits */
        message[got] = '\0';
        close(in[1]); close(out[0]); close(err[0]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        send_text('f', message);
        return -1;
    }
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    cur = (struct child){.pid = pid, .in = in[1], .out = out[0], .err = err[0]};
    if (req.null_stdin) close_fd(&cur.in);  /* its stdin is /dev/null: nothing to feed */
    return 1;
}

static void queue_stdin(const char *data, size_t len) {
    if (cur.pid == 0 || cur.in < 0) return;  /* nobody to give it to: dropped */
    if (pendoff > 0 && pendoff == pendlen) pendoff = pendlen = 0;
    char *grown = realloc(pending, pendlen + len);
    if (!grown) die("out of memory");
    pending = grown;
    memcpy(pending + pendlen, data, len);
    pendlen += len;
}

static void flush_stdin(void) {
    while (cur.in >= 0 && pendoff < pendlen) {
        ssize_t n = write(cur.in, pending + pendoff, pendlen - pendoff);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n < 0) { pendoff = pendlen; break; }  /* EPIPE: it stopped reading */
        pendoff += (size_t)n;
    }
    if (cur.in >= 0 && cur.in_eof && pendoff == pendlen) close_fd(&cur.in);
    if (pendoff == pendlen) { free(pending); pending = NULL; pendlen = pendoff = 0; }
}

static void reset(void);

/* Start request ``number`` (its 'R' payload), or answer why not: 'f', or 's' for a queued
 * one whose predecessor did not start. */
static void start_request(uint32_t number, char *payload, size_t len) {
    int queued = len > 0 && (payload[0] & QUEUED);
    if (queued && last_failed) { send_text('s', ""); return; }
    if (queued && (payload[0] & 3) != 3) {
        send_text('f', "a queued request must stop first and have a null stdin");
        last_failed = 1;
        return;
    }
    int started = run(payload, len);
    last_failed = started < 0;
    running = started > 0 ? number : 0;
}

static void enqueue(uint32_t number, const char *payload, size_t len) {
    if (nqueued == MAX_QUEUED) { errno = EOVERFLOW; die("too many queued requests"); }
    char *copy = malloc(len ? len : 1);
    if (!copy) die("out of memory");
    memcpy(copy, payload, len);
    queue[nqueued++] = (struct queued){copy, len, number};
}

/* The command ended: start what was queued behind it (skipping what cannot start). */
static void start_queued(void) {
    while (cur.pid == 0 && nqueued > 0) {
        struct queued next = queue[0];
        memmove(queue, queue + 1, sizeof *queue * (size_t)--nqueued);
        start_request(next.number, next.payload, next.len);
        free(next.payload);
    }
}

static void handle(char type, char *payload, size_t len) {
    switch (type) {
    case 'R': {
        uint32_t number = ++requests;
        int queued = len > 0 && (payload[0] & QUEUED);
        if (queued && (cur.pid != 0 || nqueued > 0)) enqueue(number, payload, len);
        else if (cur.pid != 0) send_text('f', "a command is already running");
        else start_request(number, payload, len);
        break;
    }
    case 'I': queue_stdin(payload, len); flush_stdin(); break;
    case 'E': cur.in_eof = 1; flush_stdin(); break;
    case 'K':  /* aimed at a request that ended: whatever started since stopped them */
        if (len == 4 && (cur.pid == 0 || be32(payload) != running)) send_text('k', "0");
        else report_stop();
        break;
    case 'C': reset(); break;
    default: send_text('f', "unknown request"); break;
    }
}

/* Read what the host sent and handle every complete frame; returns 0 at end of input. */
static int read_host(void) {
    if (incap - inlen < CHUNK) {
        incap = incap ? incap * 2 : 4 * CHUNK;
        inbuf = realloc(inbuf, incap);
        if (!inbuf) die("out of memory");
    }
    ssize_t n = read(0, inbuf + inlen, incap - inlen);
    if (n < 0 && errno == EINTR) return 1;
    if (n <= 0) return 0;
    inlen += (size_t)n;
    size_t off = 0;
    while (inlen - off >= 5) {
        unsigned char *h = (unsigned char *)inbuf + off;
        uint32_t len = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | h[4];
        if (len > MAX_FRAME) { errno = EMSGSIZE; die("frame too large"); }
        if (inlen - off - 5 < len) break;
        handle((char)h[0], inbuf + off + 5, len);
        off += 5 + len;
    }
    memmove(inbuf, inbuf + off, inlen - off);
    inlen -= off;
    return 1;
}

/* Forward one chunk of the command's output; closes the pipe at its end. */
static void forward(int *fd, char type) {
    static char chunk[CHUNK];
    ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) { close_fd(fd); return; }
    send_frame(type, chunk, (size_t)n);
}

/* After the command exited: its outputs are done (or given up on); report the status. */
/* Outputs still held open by a finished command's background processes: read and
 * discarded until they close, so a chatty server it started is not killed by SIGPIPE. */
static int orphans[MAX_ORPHANS];
static int norphans;

static void adopt(int *fd) {
    if (*fd < 0) return;
    if (norphans == MAX_ORPHANS) {  /* the oldest goes: its writers get EPIPE */
        close(orphans[0]);
        memmove(orphans, orphans + 1, sizeof *orphans * (MAX_ORPHANS - 1));
        norphans--;
    }
    fcntl(*fd, F_SETFL, O_NONBLOCK);
    orphans[norphans++] = *fd;
    *fd = -1;
}

static void drain_orphan(int i) {
    static char scratch[CHUNK];
    ssize_t n = read(orphans[i], scratch, sizeof scratch);
    if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) return;
    close(orphans[i]);
    orphans[i] = orphans[--norphans];
}

static long long oom_kills(void);

static void finish_if_done(void) {
    if (cur.pid == 0 || !cur.exited) return;
    if ((cur.out >= 0 || cur.err >= 0) && ms_since(&cur.exited_at) < DRAIN_MS) return;
    close_fd(&cur.in); adopt(&cur.out); adopt(&cur.err);
    free(pending); pending = NULL; pendlen = pendoff = 0;
    char status[48];
    if (cur.status == 128 + SIGKILL)
        snprintf(status, sizeof status, "%d oom_kill=%lld", cur.status, oom_kills());
    else
        snprintf(status, sizeof status, "%d", cur.status);
    cur = (struct child){.pid = 0, .in = -1, .out = -1, .err = -1};
    running = 0;
    send_text('x', status);
    start_queued();
}

/* ------------------------------------------------------------------------------------
 * Reset ('C', protocol 3): a used sandbox made as it was when the supervisor started, and
 * proved so. Only in a supervisor started with --reusable (the host asks for that when a
 * profile reuses its sandboxes), which records the sandbox's *baseline* before anything
 * runs: every entry of every writable mount (path, owner, mode, device, size and mtime of
 * files, target of links), the processes, the SysV IPC objects and the unix sockets (a
 * reset also probes each baseline entry for a lock left on it: probe_locks). A writable
 * mount that is sealed at the start (see sealed(): nothing in it a non-root uid could
 * change, like /dev) is left out. A reset then
 *   1. stops every other process (kill(-1) from pid 1, as 'K');
 *   2. compares the sandbox with its baseline: whatever differs is the work left (the
 *      first comparison only finds that: it does not probe for locks, so it never
 *      verifies; a run nearly always leaves something, and the probes are a third of a
 *      comparison's system calls, each a trap to the sentry under gVisor);
 *   3. cleans as each uid that owns something that differs (acting as that uid, never as
 *      root, so it removes only what that uid could): it opens its own directories up (0777), removes
 *      everything it may below every writable mount (never crossing into another mount,
 *      never following a link, never touching a baseline entry), puts the modes of its
 *      own baseline entries back, and removes its SysV IPC objects;
 *   4. repeats 2-3 until nothing differs (verified) or MAX_ROUNDS passed (not verified).
 * What the baseline cannot see cannot be verified: where SysV IPC is not listed in
 * /proc/sysvipc (gVisor) its creation must be refused (the host's seccomp profile does so
 * for reusable gVisor sandboxes), likewise POSIX message queues where no mqueue file
 * system is mounted; a writable root file system is never verified. The answer 'c' is
 * "0 rounds=R cpu_ns=N oom_kill=K ms=T" (counters -1 where unreadable) or "1 <why>".
 */
#define MAX_MOUNTS 64
#define MAX_LIST 20000         /* entries a reset lists before it gives up (discarded) */
#define MAX_DEPTH 48
#define MAX_ROUNDS 4
#define PATH_CAP 4096

struct mount { char *path; dev_t dev; int dir, mqueue; };
static struct mount mounts[MAX_MOUNTS];
static int nmounts;
static int reusable, root_writable;
static int ipc_listed, ipc_refused, mq_listed, mq_refused;

struct lines { char **v; size_t n, cap; int overflow; };
static struct lines baseline;

static void add_line(struct lines *l, const char *text) {
    if (l->n >= MAX_LIST) { l->overflow = 1; return; }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) die("out of memory");
    }
    if (!(l->v[l->n++] = strdup(text))) die("out of memory");
}

static void free_lines(struct lines *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    *l = (struct lines){0};
}

static int by_text(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The uid act_as() acts as (0: the supervisor's own). */
static uid_t acting;

/* A directory's entries read straight from the kernel: no dup and no DIR, whose fdopendir
 * costs three more system calls per directory (each one a trap to the sentry under
 * gVisor, a dozen directories per snapshot). */
struct entries { int fd; long len, off; char buf[4096]; };

/* The next name in ``dir`` (never "." or ".."); NULL at its end or on an error. */
static const char *next_entry(struct entries *dir) {
    for (;;) {
        if (dir->off >= dir->len) {
            dir->len = getdents64(dir->fd, dir->buf, sizeof dir->buf);
            dir->off = 0;
            if (dir->len <= 0) return NULL;
        }
        struct dirent64 *e = (struct dirent64 *)(dir->buf + dir->off);
        dir->off += e->d_reclen;
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) return e->d_name;
    }
}

/* A /proc or cgroup table opened for fgets() into the caller's ``buf``: stdio's own buffer
 * would cost an fstat() first. */
static FILE *open_table(const char *file, char *buf, size_t size) {
    FILE *f = fopen(file, "re");
    if (f) setvbuf(f, buf, _IOFBF, size);
    return f;
}

/* Whether ``path`` is an entry of the baseline (lines are "path\t..."). */
static int in_baseline(const char *path) {
    size_t lo = 0, hi = baseline.n, len = strlen(path);
    while (lo < hi) {  /* sorted by text: "path\t" sorts by path first */
        size_t mid = (lo + hi) / 2;
        int c = strncmp(baseline.v[mid], path, len);
        if (c == 0 && baseline.v[mid][len] == '\t') return 1;
        if (c < 0 || (c == 0 && (unsigned char)baseline.v[mid][len] < '\t')) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* Set when a baseline entry could not be probed for locks: the snapshot then lists
 * /proc/locks instead (see probe_locks). */
static int locks_unprobed;
/* Whether a snapshot probes the baseline entries for locks (a reset's verifying ones). */
static int probing;

/* Whether a file description outside every process still locks baseline entry ``name``
 * (in ``dirfd``): a flock, a POSIX or OFD lock, or (on a regular file of a non-root uid,
 * the only ones a sandbox uid may lease) a lease. Every lock belongs to an open file
 * description, and every process but pid 1 is stopped, so one found here was kept by a
 * description in flight (a unix socket's queue) or outside the sandbox; only entries that
 * outlive a reset (its baseline's) are reachable by the next run. Probed on the entry
 * itself, as the uid walking its mount: reading /proc/locks instead takes the kernel's
 * file-lock write lock, an RCU grace period (10-20 ms) on an idle machine, and gVisor has
 * no /proc/locks. Sets locks_unprobed when the entry cannot be opened or asked. Asked
 * through ``open_fd`` when the caller has the entry open already (a directory it lists). */
static int probe_locks(int open_fd, int dirfd, const char *name, const struct stat *st) {
    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISFIFO(st->st_mode)) return 0;
    int fd = open_fd >= 0 ? open_fd
             : openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) { locks_unprobed = 1; return 0; }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int held = 0;
    if (fcntl(fd, F_GETLK, &fl) != 0) locks_unprobed = 1;
    else held = fl.l_type != F_UNLCK;  /* pid 1 holds none: any lock conflicts */
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) flock(fd, LOCK_UN);
    else if (errno == EWOULDBLOCK) held = 1;
    else locks_unprobed = 1;
    if (S_ISREG(st->st_mode) && st->st_uid != 0) {
        /* a write lease is refused while any other description has the file open */
        if (st->st_uid != acting) locks_unprobed = 1;
        else if (fcntl(fd, F_SETLEASE, F_WRLCK) == 0) fcntl(fd, F_SETLEASE, F_UNLCK);
        else if (errno == EAGAIN) held = 1;
        else locks_unprobed = 1;
    }
    if (fd != open_fd) close(fd);
    return held;
}

/* One entry as a line: path, uid, gid, mode, device; size and mtime of a file, target of
 * a link (what a non-root uid could change about an entry it may write); and, for a
 * baseline entry during a reset, "#lock path" when it is still locked (probe_locks). */
static void entry_line(struct lines *out, int open_fd, int dirfd, const char *name,
                       const char *path, const struct stat *st) {
    char line[PATH_CAP + 512], extra[PATH_CAP] = "";
    if (S_ISREG(st->st_mode)) {
        snprintf(extra, sizeof extra, "%lld:%lld.%09ld", (long long)st->st_size,
                 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
    } else if (S_ISLNK(st->st_mode)) {
        ssize_t n = readlinkat(dirfd, name, extra, sizeof extra - 1);
        extra[n > 0 ? n : 0] = '\0';
    }
    snprintf(line, sizeof line, "%s\t%u\t%u\t%o\t%llx\t%s", path, (unsigned)st->st_uid,
             (unsigned)st->st_gid, (unsigned)st->st_mode, (unsigned long long)st->st_rdev,
             extra);
    add_line(out, line);
    if (probing && in_baseline(path) && probe_locks(open_fd, dirfd, name, st)) {
        snprintf(line, sizeof line, "#lock %s", path);
        add_line(out, line);
    }
}

/* Every entry below the open directory ``dirfd`` (``path``) on device ``dev``. */
static void list_tree(struct lines *out, int dirfd, char *path, size_t len, dev_t dev,
                      int depth) {
    struct entries dir = {.fd = dirfd};
    const char *name;
    while ((name = next_entry(&dir)) && !out->overflow) {
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev)
            continue;  /* gone meanwhile, or another mount's root (listed on its own) */
        size_t n = len + 1 + strlen(name);
        if (n >= PATH_CAP || depth >= MAX_DEPTH) { out->overflow = 1; break; }
        snprintf(path + len, PATH_CAP - len, "/%s", name);
        int fd = S_ISDIR(st.st_mode)
                 ? openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        entry_line(out, fd, dirfd, name, path, &st);
        if (fd >= 0) { list_tree(out, fd, path, n, dev, depth + 1); close(fd); }
        path[len] = '\0';
    }
}

/* The entries of mount ``m``, its root included. */
static void list_mount(struct lines *out, const struct mount *m, const struct stat *st) {
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s", strcmp(m->path, "/") ? m->path : "");
    int fd = S_ISDIR(st->st_mode) ? open(m->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    entry_line(out, fd, AT_FDCWD, m->path, m->path, st);
    if (fd >= 0) { list_tree(out, fd, path, strlen(path), st->st_dev, 0); close(fd); }
}

/* Act as ``uid`` (effective and file-system uid and gid: what permission checks use) until
 * act_as(0); pid 1 keeps its saved uid 0, and its effective capabilities come back from the
 * permitted set when its effective uid is 0 again. No fork: that costs milliseconds under
 * gVisor. Nothing else runs meanwhile (every other process is stopped). */
static void act_as_ids(uid_t uid, gid_t gid) {
    acting = uid;
    if (uid != 0) {
        if (setresgid(-1, gid, -1) != 0 || setresuid(-1, uid, -1) != 0) die("acting as a uid");
        return;
    }
    if (setresuid(-1, 0, -1) != 0 || setresgid(-1, 0, -1) != 0) die("acting as root again");
    if (prctl(PR_SET_DUMPABLE, 0) != 0) die("prctl(PR_SET_DUMPABLE)");  /* euid changes reset it */
}

static void act_as(uid_t uid) { act_as_ids(uid, (gid_t)uid); }

/* Mount ``m`` listed as the owner of its root (a room owned by the judge, mode 0700, is
 * closed to root without CAP_DAC_READ_SEARCH). */
static void list_mount_as_owner(struct lines *out, const struct mount *m) {
    struct stat st;
    if (lstat(m->path, &st) != 0) { add_line(out, "#missing mount"); return; }
    uid_t owner = S_ISDIR(st.st_mode) ? st.st_uid : 0;
    if (owner != 0) act_as(owner);
    list_mount(out, m, &st);
    if (owner != 0) act_as(0);
}

/* Lines of a /proc table after its header, as "#tag field" for field ``column`` (0-based,
 * whitespace-separated), skipping rows whose field is "0" (a socket no process holds). */
static void list_table(struct lines *out, const char *file, const char *tag, int column) {
    char io[4096];
    FILE *f = open_table(file, io, sizeof io);
    if (!f) return;
    char row[1024], line[1200];
    int first = 1;
    while (fgets(row, sizeof row, f)) {
        if (first) { first = 0; continue; }
        char *save = NULL, *field = strtok_r(row, " \t\n", &save);
        for (int i = 0; field && i < column; i++) field = strtok_r(NULL, " \t\n", &save);
        if (!field || !strcmp(field, "0")) continue;
        snprintf(line, sizeof line, "#%s %s", tag, field);
        add_line(out, line);
    }
    fclose(f);
}

/* SysV IPC objects as "#ipc kind id\tuid" (so their owner cleans them). */
static void list_ipc(struct lines *out) {
    static const struct { const char *kind; int id, uid; } tables[] = {
        {"shm", 1, 7}, {"msg", 1, 7}, {"sem", 1, 4}};
    for (size_t t = 0; t < 3; t++) {
        char file[64], row[1024], line[128];
        char io[4096];
        snprintf(file, sizeof file, "/proc/sysvipc/%s", tables[t].kind);
        FILE *f = open_table(file, io, sizeof io);
        if (!f) continue;
        int first = 1;
        while (fgets(row, sizeof row, f)) {
            if (first) { first = 0; continue; }
            char *fields[16], *save = NULL;
            int n = 0;
            for (char *p = strtok_r(row, " \t\n", &save); p && n < 16;
                 p = strtok_r(NULL, " \t\n", &save))
                fields[n++] = p;
            if (n <= tables[t].uid) continue;
            snprintf(line, sizeof line, "#ipc %s %s\t%s", tables[t].kind, fields[tables[t].id],
                     fields[tables[t].uid]);
            add_line(out, line);
        }
        fclose(f);
    }
}

/* File locks on a writable mount (/proc/locks: "... MAJ:MIN:INODE ..." in hex), when a
 * baseline entry could not be probed; "#lock unlisted" where /proc/locks cannot be read
 * (gVisor), so that such a reset is not verified. */
static void list_locks(struct lines *out) {
    FILE *f = fopen("/proc/locks", "re");
    if (!f) { add_line(out, "#lock unlisted"); return; }
    char row[512];
    while (fgets(row, sizeof row, f)) {
        char *save = NULL;
        for (char *p = strtok_r(row, " \t\n", &save); p; p = strtok_r(NULL, " \t\n", &save)) {
            unsigned maj, min;
            unsigned long long inode;
            if (sscanf(p, "%x:%x:%llu", &maj, &min, &inode) != 3) continue;
            for (int i = 0; i < nmounts; i++) {
                if (major(mounts[i].dev) != maj || minor(mounts[i].dev) != min) continue;
                char line[600];
                snprintf(line, sizeof line, "#lock %s %s", mounts[i].path, p);
                add_line(out, line);
            }
        }
    }
    fclose(f);
}

/* Every process but pid 1. */
static void list_processes(struct lines *out) {
    struct entries proc = {.fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (proc.fd < 0) { add_line(out, "#proc unreadable"); return; }
    const char *name;
    while ((name = next_entry(&proc))) {
        if (name[0] < '0' || name[0] > '9' || !strcmp(name, "1")) continue;
        char line[300];
        snprintf(line, sizeof line, "#proc %s", name);
        add_line(out, line);
    }
    close(proc.fd);
}

/* The sandbox as the baseline describes it, sorted; ``why`` set when it cannot be. */
static void snapshot(struct lines *out, const char **why) {
    *why = NULL;
    if (root_writable) *why = "the root file system is writable";
    else if (!ipc_listed && !ipc_refused)
        *why = "SysV IPC objects cannot be listed here and creating them is allowed";
    else if (!mq_listed && !mq_refused)
        *why = "POSIX message queues cannot be listed here and creating them is allowed";
    if (*why) return;
    locks_unprobed = 0;
    for (int i = 0; i < nmounts; i++) list_mount_as_owner(out, &mounts[i]);
    list_processes(out);
    if (ipc_listed) list_ipc(out);
    /* Unix sockets (an abstract listener has no file to remove). Not TCP/UDP: the kernel
     * walks its host-wide tables to print them (~4 ms each), and every socket is some
     * process's, and only pid 1 is left. */
    list_table(out, "/proc/net/unix", "unix", 6);
    if (locks_unprobed) list_locks(out);
    if (out->overflow) *why = "too many entries to list";
    qsort(out->v, out->n, sizeof *out->v, by_text);
}

/* The mounts a non-root uid could have written to: every mount mounted read-write, but
 * the kernel's own file systems; notes a read-write root and the mqueue file system. */
static void find_mounts(void) {
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) die("reading /proc/self/mountinfo");
    char row[4096];
    while (fgets(row, sizeof row, f) && nmounts < MAX_MOUNTS) {
        char *fields[32], *save = NULL;
        int n = 0, dash = -1;
        for (char *p = strtok_r(row, " \n", &save); p && n < 32; p = strtok_r(NULL, " \n", &save)) {
            if (!strcmp(p, "-") && dash < 0) dash = n;
            fields[n++] = p;
        }
        if (dash < 6 || dash + 1 >= n) continue;
        const char *point = fields[4], *options = fields[5], *type = fields[dash + 1];
        if (strncmp(options, "rw", 2) != 0 || (options[2] != ',' && options[2] != '\0')) continue;
        if (!strcmp(type, "proc") || !strcmp(type, "sysfs") || !strcmp(type, "cgroup") ||
            !strcmp(type, "cgroup2") || !strcmp(type, "devpts"))
            continue;
        if (!strcmp(point, "/")) { root_writable = 1; continue; }
        char path[PATH_CAP];  /* mountinfo escapes space, tab, newline, backslash as \ooo */
        size_t k = 0;
        for (const char *p = point; *p && k < sizeof path - 1; p++) {
            if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] && p[3]) {
                path[k++] = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                p += 3;
            } else {
                path[k++] = *p;
            }
        }
        path[k] = '\0';
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        struct mount *m = &mounts[nmounts++];
        if (!(m->path = strdup(path))) die("out of memory");
        m->dev = st.st_dev;
        m->dir = S_ISDIR(st.st_mode);
        m->mqueue = !strcmp(type, "mqueue");
        mq_listed |= m->mqueue;
    }
    fclose(f);
}

/* Whether creating a POSIX queue / SysV IPC objects is refused here (the sandbox's seccomp
 * profile applies to pid 1 too): then none can exist, listed or not. */
static int refused(long result) { return result < 0 && (errno == EPERM || errno == ENOSYS); }

static void probe_ipc(void) {
    long q = syscall(SYS_mq_open, "evalfleet-probe", O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
    mq_refused = refused(q);
    if (q >= 0) { close((int)q); syscall(SYS_mq_unlink, "evalfleet-probe"); }
    int shm = shmget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    ipc_refused = refused(shm) && refused(msg) && refused(sem);
    if (shm >= 0) shmctl(shm, IPC_RMID, NULL);
    if (msg >= 0) msgctl(msg, IPC_RMID, NULL);
    if (sem >= 0) semctl(sem, 0, IPC_RMID);
    ipc_listed = access("/proc/sysvipc/shm", R_OK) == 0;
}

/* Whether a mount's listing holds nothing a non-root uid could change: every entry
 * root's, no directory or regular file writable by group or others (an ACL's grants show
 * in the group bits), nothing unlistable. Without capabilities no process but pid 1 can
 * then add, remove, chmod or write anything there. */
static int sealed(const struct lines *listing) {
    for (size_t i = 0; i < listing->n; i++) {
        const char *tab = strchr(listing->v[i], '\t');
        unsigned uid, gid, mode;
        if (!tab || sscanf(tab + 1, "%u\t%u\t%o", &uid, &gid, &mode) != 3 || uid != 0)
            return 0;
        if ((S_ISDIR(mode) || S_ISREG(mode)) && (mode & (S_IWGRP | S_IWOTH))) return 0;
    }
    return listing->n > 0 && !listing->overflow;
}

/* Leave out the sealed mounts (/dev, /sys/fs/cgroup, Docker's masks of /proc files...):
 * they cannot differ from their baseline, so no reset lists or cleans them. */
static void drop_sealed_mounts(void) {
    int kept = 0;
    for (int i = 0; i < nmounts; i++) {
        struct lines listing = {0};
        list_mount_as_owner(&listing, &mounts[i]);
        int drop = !mounts[i].mqueue && sealed(&listing);
        free_lines(&listing);
        if (drop) free(mounts[i].path);
        else mounts[kept++] = mounts[i];
    }
    nmounts = kept;
}

/* At start, before any command: what "as it was" means. */
static void take_baseline(void) {
    find_mounts();
    probe_ipc();
    drop_sealed_mounts();
    const char *why;
    snapshot(&baseline, &why);
}

/* Remove what this uid may below the open directory ``dirfd`` (``path``), opening its own
 * directories up first; never baseline entries, other mounts or links' targets. */
static void clean_tree(int dirfd, const struct stat *st, char *path, size_t len, dev_t dev,
                       int depth) {
    if (st->st_uid == acting && (st->st_mode & 07777) != 0777) fchmod(dirfd, 0777);
    struct entries dir = {.fd = dirfd};
    const char *name;
    while ((name = next_entry(&dir))) {
        struct stat es;
        if (fstatat(dirfd, name, &es, AT_SYMLINK_NOFOLLOW) != 0 || es.st_dev != dev)
            continue;
        size_t n = len + 1 + strlen(name);
        if (n >= PATH_CAP) continue;
        snprintf(path + len, PATH_CAP - len, "/%s", name);
        int base = in_baseline(path);
        if (S_ISDIR(es.st_mode)) {
            if (depth < MAX_DEPTH) {
                int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
                int fd = openat(dirfd, name, flags);
                if (fd < 0 && es.st_uid == acting && fchmodat(dirfd, name, 0777, 0) == 0)
                    fd = openat(dirfd, name, flags);
                if (fd >= 0) { clean_tree(fd, &es, path, n, dev, depth + 1); close(fd); }
            }
            if (!base) unlinkat(dirfd, name, AT_REMOVEDIR);
        } else if (!base) {
            unlinkat(dirfd, name, 0);
        }
        path[len] = '\0';
    }
}

/* As ``uid``: clean every writable mount, put the modes of this uid's baseline entries
 * back, remove its SysV IPC objects. */
static void clean_as(uid_t uid) {
    char path[PATH_CAP];
    act_as(uid);
    for (int i = 0; i < nmounts; i++) {
        if (!mounts[i].dir) continue;
        struct stat st;
        int fd = open(mounts[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) continue;
        snprintf(path, sizeof path, "%s", strcmp(mounts[i].path, "/") ? mounts[i].path : "");
        if (fstat(fd, &st) == 0) clean_tree(fd, &st, path, strlen(path), mounts[i].dev, 0);
        close(fd);
    }
    for (size_t i = 0; i < baseline.n; i++) {
        unsigned owner, group, mode;
        char *tab = strchr(baseline.v[i], '\t');
        if (baseline.v[i][0] == '#' || !tab) continue;
        if (sscanf(tab + 1, "%u\t%u\t%o", &owner, &group, &mode) != 3 || owner != uid) continue;
        if (S_ISLNK(mode)) continue;
        *tab = '\0';
        chmod(baseline.v[i], mode & 07777);
        *tab = '\t';
    }
    struct lines ipc = {0};
    if (ipc_listed) list_ipc(&ipc);
    for (size_t i = 0; i < ipc.n; i++) {
        char kind[8];
        int id;
        unsigned owner;
        if (sscanf(ipc.v[i], "#ipc %7s %d\t%u", kind, &id, &owner) != 3 || owner != uid) continue;
        if (!strcmp(kind, "shm")) shmctl(id, IPC_RMID, NULL);
        else if (!strcmp(kind, "msg")) msgctl(id, IPC_RMID, NULL);
        else semctl(id, 0, IPC_RMID);
    }
    free_lines(&ipc);
    act_as(0);
}

/* Compare a snapshot with the baseline: the owners of what differs (entries and IPC
 * objects; at most ``max``), and the first difference (for the answer). */
static size_t differences(const struct lines *now, uid_t *owners, size_t max, char *first,
                          size_t size) {
    size_t i = 0, j = 0, found = 0, kinds = 0;
    first[0] = '\0';
    while (i < now->n || j < baseline.n) {
        int c = i == now->n ? 1 : j == baseline.n ? -1 : strcmp(now->v[i], baseline.v[j]);
        if (c == 0) { i++; j++; continue; }
        const char *line = c < 0 ? now->v[i++] : baseline.v[j++];
        found++;
        if (!first[0]) snprintf(first, size, "%s %.300s", c < 0 ? "new:" : "gone:", line);
        const char *tab = strchr(line, '\t');
        unsigned owner;
        if (c < 0 && tab && sscanf(tab + 1, "%u", &owner) == 1 && owner != 0) {
            size_t k = 0;
            while (k < kinds && owners[k] != owner) k++;
            if (k == kinds && kinds < max) owners[kinds++] = owner;
        }
    }
    for (size_t k = kinds; k < max; k++) owners[k] = 0;
    return found;
}

static long long read_counter(const char *file, const char *key) {
    char io[4096];
    FILE *f = open_table(file, io, sizeof io);
    if (!f) return -1;
    char row[256];
    long long value = -1;
    size_t len = key ? strlen(key) : 0;
    while (fgets(row, sizeof row, f)) {
        if (!key) { value = atoll(row); break; }
        if (!strncmp(row, key, len) && row[len] == ' ') { value = atoll(row + len + 1); break; }
    }
    fclose(f);
    return value;
}

/* The sandbox cgroup's OOM kills so far (v1, else v2), -1 where unreadable. */
static long long oom_kills(void) {
    long long found = read_counter("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill");
    return found >= 0 ? found : read_counter("/sys/fs/cgroup/memory.events", "oom_kill");
}

/* The sandbox cgroup's CPU time (ns) and OOM kills, as the next run's baseline. */
static void counters(long long *cpu_ns, long long *oom_kill) {
    *cpu_ns = read_counter("/sys/fs/cgroup/cpuacct/cpuacct.usage", NULL);
    if (*cpu_ns < 0) *cpu_ns = read_counter("/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage", NULL);
    if (*cpu_ns < 0) {
        long long usec = read_counter("/sys/fs/cgroup/cpu.stat", "usage_usec");
        *cpu_ns = usec < 0 ? -1 : usec * 1000;
    }
    *oom_kill = oom_kills();
}

static void forget_commands(void) {
    for (int i = 0; i < norphans; i++) close(orphans[i]);
    norphans = 0;
    close_fd(&cur.in); close_fd(&cur.out); close_fd(&cur.err);
    cur = (struct child){.pid = 0, .in = -1, .out = -1, .err = -1};
    free(pending); pending = NULL; pendlen = pendoff = 0;
    while (nqueued > 0) free(queue[--nqueued].payload);
    running = 0;
    last_failed = 0;
}

static void reset(void) {
    char answer[512], first[400] = "", stopped[80];
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    if (!reusable) { send_text('c', "1 the supervisor was not started --reusable"); return; }
    if (cur.pid != 0 || nqueued > 0) { send_text('c', "1 a command is still running"); return; }
    stop_others(stopped, sizeof stopped);
    forget_commands();
    /* The first snapshot only finds what to clean (a run nearly always leaves something):
     * its baseline entries are not probed for locks. Only a probed one verifies. */
    for (int round = 0, cleaned = 0;; round++) {
        struct lines now = {0};
        const char *why;
        uid_t owners[8];
        probing = round > 0;
        snapshot(&now, &why);
        size_t left = why ? 1 : differences(&now, owners, 8, first, sizeof first);
        free_lines(&now);
        if (why) { snprintf(answer, sizeof answer, "1 %s", why); break; }
        if (left == 0 && probing) {
            long long cpu_ns, oom_kill;
            counters(&cpu_ns, &oom_kill);
            snprintf(answer, sizeof answer, "0 rounds=%d cpu_ns=%lld oom_kill=%lld ms=%ld",
                     cleaned, cpu_ns, oom_kill, ms_since(&started));
            break;
        }
        if (cleaned == MAX_ROUNDS) {
            snprintf(answer, sizeof answer, "1 not as it started after %d rounds (%zu "
                     "differences; %s)", cleaned, left, first);
            break;
        }
        if (left == 0) continue;  /* nothing to clean: look again, probing */
        stop_others(stopped, sizeof stopped);
        for (size_t k = 0; k < 8 && owners[k]; k++) clean_as(owners[k]);
        cleaned++;
    }
    send_text('c', answer);
}

static void serve(void) {
    struct pollfd fds[5 + MAX_ORPHANS];
    for (;;) {
        fds[0] = (struct pollfd){.fd = 0, .events = POLLIN};
        fds[1] = (struct pollfd){.fd = wake_pipe[0], .events = POLLIN};
        fds[2] = (struct pollfd){.fd = cur.out, .events = POLLIN};
        fds[3] = (struct pollfd){.fd = cur.err, .events = POLLIN};
        fds[4] = (struct pollfd){.fd = pendoff < pendlen ? cur.in : -1, .events = POLLOUT};
        int watched = norphans;
        for (int i = 0; i < watched; i++)
            fds[5 + i] = (struct pollfd){.fd = orphans[i], .events = POLLIN};
        int timeout = cur.pid && cur.exited ? 5 : -1;
        if (poll(fds, 5 + (nfds_t)watched, timeout) < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        if (fds[1].revents) {
            char drain[64];
            while (read(wake_pipe[0], drain, sizeof drain) > 0) {}
            reap();
        }
        if (fds[2].revents) forward(&cur.out, 'o');
        if (fds[3].revents) forward(&cur.err, 'e');
        if (fds[4].revents) flush_stdin();
        for (int i = watched - 1; i >= 0; i--)  /* backwards: a closed one is swapped out */
            if (fds[5 + i].revents) drain_orphan(i);
        if (fds[0].revents && !read_host()) return;
        finish_if_done();
    }
}

/* Start over with an empty environment, so that /proc/1/environ holds nothing: every
 * command's environment comes in its request. */
static void shed_environment(char **argv) {
    if (environ == NULL || environ[0] == NULL) return;
    char *empty[] = {NULL};
    execve("/proc/self/exe", argv, empty);
    if (argv[0] && argv[0][0] == '/') execve(argv[0], argv, empty);
    die("re-executing with an empty environment");
}

/* The capabilities the supervisor keeps: switching uids, and signalling every process. */
#define KEPT_CAPS (1u << CAP_KILL | 1u << CAP_SETGID | 1u << CAP_SETUID)

/* Empty the bounding set (needs CAP_SETPCAP), then keep only KEPT_CAPS, with nothing
 * inheritable: what Docker granted beyond them is gone for good. */
static void shed_capabilities(void) {
    for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
            die("prctl(PR_CAPBSET_DROP)");
    struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {{KEPT_CAPS, KEPT_CAPS, 0}, {0, 0, 0}};
    if (syscall(SYS_capset, &head, data) != 0) die("capset");
}

/* Only root in the container can switch to each step's uid (with CAP_SETUID/CAP_SETGID). */
static void check_identity(void) {
    if (getpid() != 1) {
        fprintf(stderr, "evalfleet-supervisor: must be the container's pid 1\n");
        exit(64);
    }
    if (geteuid() != 0) {
        fprintf(stderr, "evalfleet-supervisor: must start as uid 0 with CAP_SETUID, "
                        "CAP_SETGID and CAP_KILL (protocol 4)\n");
        exit(64);
    }
}

/* --dirs-as UID DIR...: each DIR made as UID (acting as it, as a reset does). */
static void make_dirs(int argc, char **argv) {
    if (argc < 3 || strcmp(argv[0], "--dirs-as") != 0) return;
    char *end;
    unsigned long uid = strtoul(argv[1], &end, 10);
    if (*end != '\0' || uid == 0 || uid > 0x7fffffffUL) return;
    mode_t old = umask(0);
    act_as((uid_t)uid);
    for (int i = 2; i < argc; i++)
        if (mkdir(argv[i], 0755) != 0 && errno != EEXIST) die("--dirs-as: mkdir");
    act_as(0);
    umask(old);
}

/* --collect: the file captures of sandbox/docker/scripts.py's COLLECT as a plain process of
 * the request's uid (the host sends it with stop_first, so every other process is gone):
 * no shell, `wc` or `head` per file, and usually no process at all (collect_in_place()),
 * or no exec (collects_itself()).
 * Arguments: nonce, budget left,
 * listing cap + 1, then "F path cap" per file; the same stream, byte for byte. Anything
 * else (a listing) exits 2 and the host runs the script. */
static long long file_size(int fd, const struct stat *st) {
    if (st->st_size > 0) return st->st_size;
    long long size = 0;  /* a kernel file that says 0: count it, as `wc -c` does */
    char buf[CHUNK];
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0) size += got;
    if (got < 0 || lseek(fd, 0, SEEK_SET) != 0) return 0;  /* the script's `|| size=0` */
    return size;
}

static void copy_out(FILE *out, int fd, long long n) {
    char buf[CHUNK];
    ssize_t got;
    while (n > 0 && (got = read(fd, buf, n < CHUNK ? (size_t)n : CHUNK)) > 0) {
        fwrite(buf, 1, (size_t)got, out);
        n -= got;
    }
}

/* Why ``path`` is not a readable regular file, or NULL with it open in *fd (-1 if the open
 * failed otherwise). Readable is what open() says as the collecting uid, not access(),
 * which asks as the real uid (pid 1's is root's when it collects in place). */
static const char *capture_status(const char *path, struct stat *st, int *fd) {
    if (lstat(path, st) == 0 && S_ISLNK(st->st_mode)) return "link";
    if (stat(path, st) != 0) return "missing";
    if (!S_ISREG(st->st_mode)) return "other";
    *fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    return *fd < 0 && errno == EACCES ? "unreadable" : NULL;
}

static int collect(FILE *out, int argc, char **argv) {
    if (argc < 3 || (argc - 3) % 3 != 0) return 2;
    const char *nonce = argv[0];
    long long left = atoll(argv[1]);
    for (int a = 3, i = 0; a < argc; a += 3, i++) {
        if (strcmp(argv[a], "F") != 0) return 2;
        struct stat st;
        int fd = -1;
        const char *status = capture_status(argv[a + 1], &st, &fd);
        if (status) { fprintf(out, "@%s %d %s\n", nonce, i, status); continue; }
        long long size = fd < 0 ? 0 : file_size(fd, &st), cap = atoll(argv[a + 2]);
        long long n = cap < left ? cap : left;
        fprintf(out, "@%s %d file %lld\n", nonce, i, size);
        if (fd >= 0) { copy_out(out, fd, n < size ? n : size); close(fd); }
        left -= size;
    }
    return fflush(out) == 0 && !ferror(out) ? 0 : 1;
}

/* A stream whose bytes go to the host as the request's stdout ('o' frames). */
static ssize_t frame_out(void *cookie, const char *data, size_t len) {
    (void)cookie;
    send_frame('o', data, len);
    return (ssize_t)len;
}

/* --collect served by pid 1 itself, acting as the request's uid:gid in its workdir: no
 * process at all (a fork costs 4-5 ms under gVisor). Only when the request stops every
 * other process first (nothing runs meanwhile), writes nothing, and no capture reaches
 * /proc (there "self" would be pid 1). Acting as the uid (effective and file-system ids,
 * no supplementary group: main() dropped them) reads what the forked collector reads, and
 * the stream is the same. 0 when served ('x' sent), -1 for the forked way. */
static int collect_in_place(const struct request *req) {
    static char buf[CHUNK];
    if (!req->stop_first || !req->null_stdin || req->seeds || !is_collect(req) ||
        req->uid == 0 || req->gid == 0)
        return -1;
    int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), status = -1, argc = 0;
    cookie_io_functions_t io = {.write = frame_out};
    FILE *out = here < 0 ? NULL : fopencookie(NULL, "w", io);
    act_as_ids(req->uid, req->gid);
    if (out && chdir(req->workdir) == 0 && !reaches_proc(req->argv + 2)) {
        setvbuf(out, buf, _IOFBF, sizeof buf);
        while (req->argv[argc]) argc++;
        status = collect(out, argc - 2, req->argv + 2);
    }
    act_as(0);
    if (out) fclose(out);
    if (here >= 0) { if (fchdir(here) != 0) die("fchdir"); close(here); }
    if (status < 0) return -1;
    char text[16];
    snprintf(text, sizeof text, "%d", status);
    send_text('x', text);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--collect")) return collect(stdout, argc - 2, argv + 2);
    check_identity();
    if (stat("/proc/self/exe", &self_exe) != 0) self_exe.st_ino = 0;  /* then it execs */
    reusable = argc > 1 && !strcmp(argv[1], "--reusable");
    shed_environment(argv);
    shed_capabilities();
    /* No supplementary group (root's, from the image's /etc/group): acting as a uid (a
     * reset's walk, a collect in place) then checks permissions as that uid:gid alone, as
     * the uid's own processes, which start with none, would. */
    if (setgroups(0, NULL) != 0) die("setgroups");
    if (prctl(PR_SET_DUMPABLE, 0) != 0) die("prctl(PR_SET_DUMPABLE)");
    make_dirs(argc - 1 - reusable, argv + 1 + reusable);
    if (reusable) take_baseline();
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) die("pipe");
    for (int fd = 0; fd <= 2; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
    struct sigaction sa = {.sa_handler = on_child, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, NULL) != 0) die("sigaction");
    signal(SIGPIPE, SIG_IGN);
    serve();
    return 0;
}
