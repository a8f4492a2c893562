/*
 * evalfleet-supervisor: the sandbox container's main process (pid 1).
 *
 * The host drives it over the container's attached stdin/stdout instead of `docker exec`,
 * so a run's sandbox-side steps cost a fork + exec inside the container (~1 ms) rather
 * than an exec through dockerd, containerd and runc (~60-90 ms each).
 *
 * It runs as the candidate's uid (the container has no capabilities, so it could not
 * switch to it otherwise) and keeps the candidate out as follows:
 *   - it is pid 1 of the container's PID namespace: a signal sent from inside the
 *     namespace is dropped unless pid 1 handles it, so the candidate cannot kill it;
 *   - it is not dumpable (PR_SET_DUMPABLE 0): /proc/1/fd, /proc/1/mem, /proc/1/environ and
 *     ptrace need CAP_SYS_PTRACE, so the candidate cannot reach its pipes or memory;
 *   - every descriptor of its own is close-on-exec: commands see only their stdio pipes;
 *   - prlimit(2) on pid 1 (same uid, so allowed by the kernel) is refused by the
 *     sandbox's seccomp profile (sandbox/docker/seccomp.py).
 * Stopping the candidate is kill(-1, SIGKILL) from pid 1, which spares only pid 1, so a
 * candidate cannot race it the way it can race a stopper of its own uid.
 *
 * Protocol version 1 (images say so in the label evalfleet.supervisor.protocol; bump it
 * with sandbox/docker/channel.py's PROTOCOL on any change): frames of [type: 1 byte]
 * [length: 4 bytes, big endian][payload], both ways.
 * Host -> supervisor:
 *   'R' run: [flags: 1 byte] workdir NUL (KEY=VALUE NUL)* NUL (argv NUL)+
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
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAME (64u << 20)  /* a run request or a stdin chunk never exceeds this */
#define CHUNK 65536
#define DRAIN_MS 50            /* output still read after the command exited */
#define MAX_ORPHANS 64         /* outputs of finished commands kept open (see adopt) */
#define STOP_TRIES 2000        /* kill(-1) passes before giving up (~2 s) */

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

/* In the child: the command's environment, directory and program; never returns. */
static void become(int err_fd, const char *workdir, char **env, char **argv) {
    char message[512];
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    for (char **e = env; *e; e++) putenv(*e);
    if (chdir(workdir) != 0) {
        snprintf(message, sizeof message, "chdir to cwd (\"%s\") failed: %s", workdir,
                 strerror(errno));
    } else {
        execvp(argv[0], argv);
        snprintf(message, sizeof message, "exec: \"%s\": %s", argv[0], strerror(errno));
    }
    (void)!write(err_fd, message, strlen(message));
    _exit(127);
}

/* A run request, pointing into the frame it came in (valid until the frame is handled). */
struct request {
    int stop_first;
    char *workdir;
    char **env, **argv;  /* NULL-terminated, in one allocation (env's) */
};

/* Split an 'R' payload: flags, workdir NUL, (KEY=VALUE NUL)*, NUL, (argv NUL)+. */
static int parse_run(char *payload, size_t len, struct request *req) {
    if (len < 2 || payload[len - 1] != '\0') return -1;
    size_t n = 0;
    for (size_t i = 1; i < len; i++) n += payload[i] == '\0';
    char **fields = calloc(n + 2, sizeof *fields);
    if (!fields) die("out of memory");
    size_t k = 0, sep = 0;
    for (char *p = payload + 1; p < payload + len; p += strlen(p) + 1) {
        if (*p == '\0' && k > 0 && sep == 0) { fields[k++] = NULL; sep = k; continue; }
        fields[k++] = p;
    }
    if (sep < 2 || sep >= k) { free(fields); return -1; }  /* no workdir, or no argv */
    req->stop_first = payload[0] & 1;
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
        become(status[1], req.workdir, req.env, req.argv);
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

int main(void) {
    if (prctl(PR_SET_DUMPABLE, 0) != 0) die("prctl(PR_SET_DUMPABLE)");
    if (getpid() != 1) {
        fprintf(stderr, "evalfleet-supervisor: must be the container's pid 1\n");
        return 64;
    }
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) die("pipe");
    for (int fd = 0; fd <= 2; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
    struct sigaction sa = {.sa_handler = on_child, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, NULL) != 0) die("sigaction");
    signal(SIGPIPE, SIG_IGN);
    serve();
    return 0;
}
