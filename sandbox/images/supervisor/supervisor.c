/*
 * evalfleet-supervisor: the sandbox container's main process (pid 1).
 *
 * The host drives it over the container's attached stdin/stdout instead of `docker exec`,
 * so a run's sandbox-side steps cost a fork + exec inside the container (~1 ms) rather
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
 * Protocol version 2 (images say so in the label evalfleet.supervisor.protocol; bump it
 * with sandbox/docker/channel.py's PROTOCOL on any change): frames of [type: 1 byte]
 * [length: 4 bytes, big endian][payload], both ways.
 * Host -> supervisor:
 *   'R' run: [flags: 1 byte][uid: 4][gid: 4] (big endian) workdir NUL
 *            (KEY=VALUE NUL)* NUL (argv NUL)+
 *            flags bit 0: stop every other process first; one run at a time.
 *   'I' stdin bytes for the running command; 'E' end of its stdin.
 *   'K' stop every other process now (also while a command runs).
 * Supervisor -> host:
 *   'o' / 'e' the command's stdout / stderr bytes;
 *   'x' the command ended: its exit status as decimal (128 + signal when killed);
 *   'f' the command could not start: a message (runc's wording where it has one);
 *   'k' stop finished: "0", or "1 <processes left>".
 * A command has ended when its process has exited and its outputs closed, or DRAIN_MS
 * after its exit if background processes still hold them: those outputs are then read and
 * discarded (not closed, which would kill a chatty background server with SIGPIPE).
 * End of stdin (the host went away) ends the supervisor, and with it the container.
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
#include <sys/prctl.h>
#include <sys/stat.h>
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
    int stop_first;
    uid_t uid;
    gid_t gid;
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

/* In the child: the command's user, environment, directory and program; never returns. */
static void become(int err_fd, const struct request *req) {
    char message[512];
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    const char *failed = drop_privileges(req);
    if (failed) {
        snprintf(message, sizeof message, "evalfleet-supervisor: %s: %s", failed,
                 strerror(errno));
    } else if (chdir(req->workdir) != 0) {
        snprintf(message, sizeof message, "chdir to cwd (\"%s\") failed: %s", req->workdir,
                 strerror(errno));
    } else {
        environ = req->env;
        execvp(req->argv[0], req->argv);
        snprintf(message, sizeof message, "exec: \"%s\": %s", req->argv[0], strerror(errno));
    }
    (void)!write(err_fd, message, strlen(message));
    _exit(127);
}

static uint32_t be32(const char *p) {
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

#define RUN_HEAD 9  /* flags, uid, gid */

/* Split an 'R' payload: flags, uid, gid, workdir NUL, (KEY=VALUE NUL)*, NUL, (argv NUL)+. */
static int parse_run(char *payload, size_t len, struct request *req) {
    if (len < RUN_HEAD + 2 || payload[len - 1] != '\0') return -1;
    size_t n = 0;
    for (size_t i = RUN_HEAD; i < len; i++) n += payload[i] == '\0';
    char **fields = calloc(n + 2, sizeof *fields);
    if (!fields) die("out of memory");
    size_t k = 0, sep = 0;
    for (char *p = payload + RUN_HEAD; p < payload + len; p += strlen(p) + 1) {
        if (*p == '\0' && k > 0 && sep == 0) { fields[k++] = NULL; sep = k; continue; }
        fields[k++] = p;
    }
    if (sep < 2 || sep >= k) { free(fields); return -1; }  /* no workdir, or no argv */
    req->stop_first = payload[0] & 1;
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

/* Start the command of an 'R' frame; answers 'f' itself when it cannot start. */
static void run(char *payload, size_t len) {
    struct request req;
    if (parse_run(payload, len, &req) != 0) { send_text('f', "bad run request"); return; }
    if (req.stop_first) { char ignored[80]; stop_others(ignored, sizeof ignored); }
    int in[2], out[2], err[2], status[2];
    if (make_pipes(in, out, err, status) != 0) {
        send_error("pipe", errno);
        free(req.env - 1);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        become(status[1], &req);
    }
    int saved = errno;
    free(req.env - 1);
    close(in[0]); close(out[1]); close(err[1]); close(status[1]);
    if (pid < 0) {
        close(in[1]); close(out[0]); close(err[0]); close(status[0]);
        send_error("fork", saved);
        return;
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
        return;
    }
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    cur = (struct child){.pid = pid, .in = in[1], .out = out[0], .err = err[0]};
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

static void handle(char type, char *payload, size_t len) {
    switch (type) {
    case 'R':
        if (cur.pid != 0) { send_text('f', "a command is already running"); return; }
        run(payload, len);
        break;
    case 'I': queue_stdin(payload, len); flush_stdin(); break;
    case 'E': cur.in_eof = 1; flush_stdin(); break;
    case 'K': report_stop(); break;
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

static void finish_if_done(void) {
    if (cur.pid == 0 || !cur.exited) return;
    if ((cur.out >= 0 || cur.err >= 0) && ms_since(&cur.exited_at) < DRAIN_MS) return;
    close_fd(&cur.in); adopt(&cur.out); adopt(&cur.err);
    free(pending); pending = NULL; pendlen = pendoff = 0;
    char status[16];
    snprintf(status, sizeof status, "%d", cur.status);
    cur = (struct child){.pid = 0, .in = -1, .out = -1, .err = -1};
    send_text('x', status);
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
                        "CAP_SETGID and CAP_KILL (protocol 2)\n");
        exit(64);
    }
}

int main(int argc, char **argv) {
    (void)argc;
    check_identity();
    shed_environment(argv);
    shed_capabilities();
    if (prctl(PR_SET_DUMPABLE, 0) != 0) die("prctl(PR_SET_DUMPABLE)");
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) die("pipe");
    for (int fd = 0; fd <= 2; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
    struct sigaction sa = {.sa_handler = on_child, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, NULL) != 0) die("sigaction");
    signal(SIGPIPE, SIG_IGN);
    serve();
    return 0;
}
