// sandbox-keeper: one Linux namespace sandbox per speculation (SANDBOX.md, "One sandbox per
// speculation"). It makes the namespaces and the fixed mounts once, then forks each command inside them.
//
//   sandbox-keeper SETUP-FILE
//
// SETUP-FILE holds NUL-terminated fields: skeleton, session folder, the session's mount point
// inside (an absolute path), the cgroup.procs file to join first ("" for none), the mount count,
// then per mount source, target (inside the skeleton), type, options (fstab words: ro, bind,
// nosuid, nodev, noexec, X-mount.mkdir; the rest is passed to the file system as data).
//
// The process that starts (K0) joins the cgroup, makes the user (mapping the caller's own uid and
// gid), mount, net, ipc, uts, cgroup and pid namespaces and forks the keeper (K), PID 1 of the new
// pid namespace. K mounts the fixed plan, binds the session folder at its mount point, pivots into
// the skeleton, switches on the loopback device and says "ready PID" (its host pid). Then it reads
// requests on stdin, NUL-terminated fields:
//   run ID CWD FSIZE-KB AS-KB CPU-SECONDS NPROC ENV-COUNT ENV... MOUNT-COUNT (SRC TGT TYPE OPTS)... COMMAND
//   kill ID          ends that command and everything it started
//   release ID       its changes are read back: its mount namespace may go
// For each run K clones C into a new mount and pid namespace (C is PID 1 there): C mounts the
// command's own mounts (the workspace overlay over a fresh upper folder, /proc, /tmp, HOME), detaches
// the session folder, says "started ID PID", runs bash -c COMMAND without capabilities under the
// limits, relays its output ("out ID LEN" + LEN bytes), kills whatever the command left, says
// "exit ID STATUS" (128+N for signal N), and holds its mounts until released (the engine reads the
// merged view through /proc/PID/root). K says "gone ID" when C has ended, "cfail ID STEP ERRNO" when
// C's setup failed. Every message is one write of at most PIPE_BUF bytes, so the ones of several
// commands never mix. When stdin ends (the engine went away) K exits and the kernel ends every
// process of the namespace; K0 and K die with their parents (PR_SET_PDEATHSIG).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_COMMANDS 64
#define MAX_FIELDS 4096
#define OUT_CHUNK 4000

static int host_proc = -1;

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (length < 0) return;
  if (length >= (int)sizeof line) length = sizeof line - 1;
  ssize_t ignored = write(1, line, (size_t)length);
  (void)ignored;
}

static int write_file(const char *file, const char *text) {
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t written = write(fd, text, strlen(text));
  int saved = errno;
  close(fd);
  errno = saved;
  return written == (ssize_t)strlen(text) ? 0 : -1;
}

/** The caller's pid as the host sees it (the host's /proc, opened before any namespace). */
static long host_pid(void) {
  char target[32];
  ssize_t length = readlinkat(host_proc, "self", target, sizeof target - 1);
  if (length <= 0) return -1;
  target[length] = 0;
  return strtol(target, NULL, 10);
}

static void mkdir_p(const char *dir) {
  char buffer[4096];
  snprintf(buffer, sizeof buffer, "%s", dir);
  for (char *slash = buffer + 1; *slash; slash++) {
    if (*slash != '/') continue;
    *slash = 0;
    mkdir(buffer, 0755);
    *slash = '/';
  }
  mkdir(buffer, 0755);
}

/** The flags a remount of a bind must keep: the kernel refuses to drop locked ones inside a user namespace. */
static unsigned long kept_flags(const char *target) {
  struct statvfs info;
  if (statvfs(target, &info) != 0) return 0;
  unsigned long flags = 0;
  if (info.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (info.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (info.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (info.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (info.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (info.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  if (info.f_flag & ST_RDONLY) flags |= MS_RDONLY;
  return flags;
}

/** One fstab-like mount, as libmount's `mount -a` would do it. */
static int mount_one(const char *source, const char *target, const char *type, const char *options) {
  unsigned long flags = 0;
  int bind = 0, make_dir = 0;
  char data[4096] = "";
  char words[4096];
  snprintf(words, sizeof words, "%s", options);
  char *save = NULL;
  for (char *word = strtok_r(words, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
    if (!strcmp(word, "ro")) flags |= MS_RDONLY;
    else if (!strcmp(word, "bind")) bind = 1;
    else if (!strcmp(word, "nosuid")) flags |= MS_NOSUID;
    else if (!strcmp(word, "nodev")) flags |= MS_NODEV;
    else if (!strcmp(word, "noexec")) flags |= MS_NOEXEC;
    else if (!strcmp(word, "X-mount.mkdir")) make_dir = 1;
    else if (!strcmp(word, "defaults")) continue;
    else {
      size_t used = strlen(data);
      snprintf(data + used, sizeof data - used, "%s%s", used ? "," : "", word);
    }
  }
  if (make_dir) mkdir_p(target);
  if (bind) {
    if (mount(source, target, NULL, MS_BIND, NULL) != 0) return -1;
    if (flags == 0) return 0;
    return mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | flags | kept_flags(target), NULL);
  }
  return mount(source, target, type, flags, data[0] ? data : NULL);
}

/** Fields of a NUL-separated buffer. */
struct fields {
  char *items[MAX_FIELDS];
  int count;
};

static int split_fields(char *buffer, size_t length, struct fields *out) {
  out->count = 0;
  size_t start = 0;
  for (size_t i = 0; i < length; i++) {
    if (buffer[i] != 0) continue;
    if (out->count == MAX_FIELDS) return -1;
    out->items[out->count++] = buffer + start;
    start = i + 1;
  }
  return 0;
}

static int mount_list(char **items, int count, int *failed_at) {
  for (int i = 0; i < count; i++) {
    if (mount_one(items[i * 4], items[i * 4 + 1], items[i * 4 + 2], items[i * 4 + 3]) != 0) {
      *failed_at = i;
      return -1;
    }
  }
  return 0;
}

static void loopback_up(void) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  struct ifreq request;
  memset(&request, 0, sizeof request);
  strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  if (ioctl(fd, SIOCGIFFLAGS, &request) == 0) {
    request.ifr_flags |= IFF_UP | IFF_RUNNING;
    ioctl(fd, SIOCSIFFLAGS, &request);
  }
  close(fd);
}

static void drop_capabilities(void) {
  for (int cap = 0; cap <= 63; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  syscall(SYS_capset, &header, data);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

// ---- one command (C) --------------------------------------------------------------------------

struct run_request {
  const char *id, *cwd;
  rlim_t fsize_kb, as_kb, cpu_seconds, nproc;
  char **env;
  char **mounts;
  int mount_count;
  const char *command;
};

static const char *session_inside;
static const char *bash_path = "/bin/bash";

static void command_fail(const char *id, const char *step) {
  say("cfail %s %s %d\n", id, step, errno);
  _exit(90);
}

static void set_limit(int resource, rlim_t value) {
  struct rlimit limit = {value, value};
  setrlimit(resource, &limit);
}

/** C: PID 1 of the command's own pid and mount namespaces. Never returns. */
static void run_command(const struct run_request *request, int hold) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int failed_at;
  if (mount_list(request->mounts, request->mount_count, &failed_at) != 0) command_fail(request->id, "mount");
  if (umount2(session_inside, MNT_DETACH) != 0) command_fail(request->id, "detach");
  int output[2];
  if (pipe2(output, O_CLOEXEC) != 0) command_fail(request->id, "pipe");
  sigset_t children;
  sigemptyset(&children);
  sigaddset(&children, SIGCHLD);
  sigprocmask(SIG_BLOCK, &children, NULL);
  int child_events = signalfd(-1, &children, SFD_CLOEXEC);
  if (child_events < 0) command_fail(request->id, "signalfd");
  say("started %s %ld\n", request->id, host_pid());
  pid_t command = fork();
  if (command < 0) command_fail(request->id, "fork");
  if (command == 0) {
    sigprocmask(SIG_UNBLOCK, &children, NULL);
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(output[1], 1) < 0 || dup2(output[1], 2) < 0) _exit(127);
    if (chdir(request->cwd) != 0) {
      dprintf(2, "speculate-sandbox: the working folder %s does not exist\n", request->cwd);
      _exit(127);
    }
    set_limit(RLIMIT_FSIZE, request->fsize_kb * 1024);
    set_limit(RLIMIT_AS, request->as_kb * 1024);
    set_limit(RLIMIT_CPU, request->cpu_seconds);
    set_limit(RLIMIT_NPROC, request->nproc);
    drop_capabilities();
    char *argv[] = {(char *)"bash", (char *)"--norc", (char *)"--noprofile", (char *)"-c", (char *)request->command, NULL};
    execve(bash_path, argv, request->env);
    dprintf(2, "speculate-sandbox: bash could not start (%s)\n", strerror(errno));
    _exit(127);
  }
  close(output[1]);
  int status = -1;
  int output_open = 1;
  char chunk[OUT_CHUNK + 64];
  while (output_open || status < 0) {
    // A closed pipe keeps reporting POLLHUP: once read to its end it is no longer watched.
    struct pollfd watched[2] = {{output_open ? output[0] : -1, POLLIN, 0}, {child_events, POLLIN, 0}};
    if (poll(watched, 2, -1) < 0) continue;
    if (output_open && (watched[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      // The bytes are read behind room for the header, whose length they decide.
      ssize_t got = read(output[0], chunk + 64, OUT_CHUNK);
      if (got <= 0) {
        output_open = 0;
      } else {
        int header = snprintf(chunk, 64, "out %s %zd\n", request->id, got);
        memmove(chunk + header, chunk + 64, (size_t)got);
        ssize_t ignored = write(1, chunk, (size_t)header + (size_t)got);
        (void)ignored;
      }
    }
    if (watched[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      ssize_t ignored = read(child_events, &info, sizeof info);
      (void)ignored;
      int child_status;
      pid_t ended;
      while ((ended = waitpid(-1, &child_status, WNOHANG)) > 0) {
        if (ended != command) continue;
        status = WIFEXITED(child_status) ? WEXITSTATUS(child_status) : 128 + WTERMSIG(child_status);
        // What the command left running ends with it; kill(-1) from PID 1 reaches all of them.
        kill(-1, SIGKILL);
      }
    }
  }
  while (kill(-1, SIGKILL) == 0) while (waitpid(-1, NULL, 0) > 0) {}
  while (waitpid(-1, NULL, WNOHANG) > 0) {}
  say("exit %s %d\n", request->id, status);
  char byte;
  while (read(hold, &byte, 1) > 0) {}
  _exit(0);
}

// ---- the keeper (K) ---------------------------------------------------------------------------

struct kept {
  char id[64];
  pid_t pid;
  int hold;
};
static struct kept commands[MAX_COMMANDS];

static struct kept *find_command(const char *id) {
  for (int i = 0; i < MAX_COMMANDS; i++) if (commands[i].pid > 0 && !strcmp(commands[i].id, id)) return &commands[i];
  return NULL;
}

/** Parses and starts one run request; `items` after the word "run". */
static void start_command(char **items, int count) {
  if (count < 8) return;
  struct run_request request;
  int at = 0;
  request.id = items[at++];
  request.cwd = items[at++];
  request.fsize_kb = strtoull(items[at++], NULL, 10);
  request.as_kb = strtoull(items[at++], NULL, 10);
  request.cpu_seconds = strtoull(items[at++], NULL, 10);
  request.nproc = strtoull(items[at++], NULL, 10);
  int env_count = atoi(items[at++]);
  if (env_count < 0 || at + env_count + 2 > count) return;
  char *env[MAX_FIELDS];
  for (int i = 0; i < env_count; i++) env[i] = items[at++];
  env[env_count] = NULL;
  request.env = env;
  request.mount_count = atoi(items[at++]);
  if (request.mount_count < 0 || at + request.mount_count * 4 + 1 > count) return;
  request.mounts = items + at;
  at += request.mount_count * 4;
  request.command = items[at];

  struct kept *slot = NULL;
  for (int i = 0; i < MAX_COMMANDS && !slot; i++) if (commands[i].pid <= 0) slot = &commands[i];
  if (!slot) {
    errno = EAGAIN;
    say("cfail %s slots %d\n", request.id, errno);
    return;
  }
  int hold[2];
  if (pipe2(hold, O_CLOEXEC) != 0) {
    say("cfail %s pipe %d\n", request.id, errno);
    return;
  }
  pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWNS | CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid < 0) {
    say("cfail %s clone %d\n", request.id, errno);
    close(hold[0]);
    close(hold[1]);
    return;
  }
  if (pid == 0) {
    // The other commands' hold pipes: a copy kept here would keep them from ever being released.
    for (int i = 0; i < MAX_COMMANDS; i++) if (commands[i].pid > 0 && commands[i].hold >= 0) close(commands[i].hold);
    close(hold[1]);
    close(0);
    run_command(&request, hold[0]);
  }
  close(hold[0]);
  snprintf(slot->id, sizeof slot->id, "%s", request.id);
  slot->pid = pid;
  slot->hold = hold[1];
}

static void handle(char **items, int count) {
  if (count < 2) return;
  if (!strcmp(items[0], "run")) return start_command(items + 1, count - 1);
  struct kept *command = find_command(items[1]);
  if (!command) return;
  if (!strcmp(items[0], "kill")) kill(command->pid, SIGKILL);
  else if (!strcmp(items[0], "release") && command->hold >= 0) {
    close(command->hold);
    command->hold = -1;
  }
}

static int count_fields(const char *buffer, size_t length, size_t *end) {
  // A request ends where its declared fields end; "run" counts its env and mounts.
  const char *items[MAX_FIELDS];
  int count = 0;
  size_t start = 0;
  for (size_t i = 0; i < length && count < MAX_FIELDS; i++) {
    if (buffer[i] != 0) continue;
    items[count++] = buffer + start;
    start = i + 1;
    int needed = 2;
    if (!strcmp(items[0], "run")) {
      // run ID CWD FSIZE AS CPU NPROC ENV-COUNT: the env count is the 8th field, the mount count follows the env.
      needed = 8;
      if (count >= 8) {
        int env_count = atoi(items[7]);
        needed = 8 + env_count + 1;
        if (count >= needed) needed += atoi(items[8 + env_count]) * 4 + 1;
      }
    }
    if (count == needed) {
      *end = start;
      return count;
    }
  }
  return 0;
}

static void keeper_loop(void) {
  sigset_t children;
  sigemptyset(&children);
  sigaddset(&children, SIGCHLD);
  sigprocmask(SIG_BLOCK, &children, NULL);
  int child_events = signalfd(-1, &children, SFD_CLOEXEC);
  static char buffer[1 << 20];
  size_t filled = 0;
  for (;;) {
    struct pollfd watched[2] = {{0, POLLIN, 0}, {child_events, POLLIN, 0}};
    if (poll(watched, 2, -1) < 0) continue;
    if (watched[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      ssize_t ignored = read(child_events, &info, sizeof info);
      (void)ignored;
      pid_t ended;
      while ((ended = waitpid(-1, NULL, WNOHANG)) > 0) {
        for (int i = 0; i < MAX_COMMANDS; i++) {
          if (commands[i].pid != ended) continue;
          say("gone %s\n", commands[i].id);
          if (commands[i].hold >= 0) close(commands[i].hold);
          commands[i].pid = 0;
          commands[i].hold = -1;
        }
      }
    }
    if (watched[0].revents & (POLLIN | POLLHUP)) {
      ssize_t got = read(0, buffer + filled, sizeof buffer - filled);
      if (got <= 0) _exit(0);
      filled += (size_t)got;
      size_t end;
      int count;
      while (filled > 0 && (count = count_fields(buffer, filled, &end)) > 0) {
        struct fields request;
        split_fields(buffer, end, &request);
        handle(request.items, request.count);
        memmove(buffer, buffer + end, filled - end);
        filled -= end;
      }
      if (filled == sizeof buffer) _exit(2);
    }
  }
}

static void keeper_fail(const char *step) {
  say("fail %s %d %s\n", step, errno, strerror(errno));
  _exit(91);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: sandbox-keeper SETUP-FILE\n");
    return 2;
  }
  static char setup[1 << 20];
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) keeper_fail("setup");
  ssize_t length = read(fd, setup, sizeof setup);
  close(fd);
  if (length <= 0) keeper_fail("setup");
  struct fields fields;
  if (split_fields(setup, (size_t)length, &fields) != 0 || fields.count < 5) {
    errno = EINVAL;
    keeper_fail("setup");
  }
  const char *skeleton = fields.items[0];
  const char *session = fields.items[1];
  session_inside = fields.items[2];
  const char *cgroup = fields.items[3];
  int mount_count = atoi(fields.items[4]);
  if (mount_count < 0 || 5 + mount_count * 4 > fields.count) {
    errno = EINVAL;
    keeper_fail("setup");
  }
  if (fields.count > 5 + mount_count * 4) bash_path = fields.items[5 + mount_count * 4];

  prctl(PR_SET_PDEATHSIG, SIGKILL);
  host_proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (host_proc < 0) keeper_fail("proc");
  if (cgroup[0] && write_file(cgroup, "0") != 0) keeper_fail("cgroup");
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWPID) != 0) keeper_fail("namespaces");
  char map[64];
  snprintf(map, sizeof map, "%u %u 1", uid, uid);
  if (write_file("/proc/self/uid_map", map) != 0) keeper_fail("namespaces");
  if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT) keeper_fail("namespaces");
  snprintf(map, sizeof map, "%u %u 1", gid, gid);
  if (write_file("/proc/self/gid_map", map) != 0) keeper_fail("namespaces");

  pid_t keeper = fork();
  if (keeper < 0) keeper_fail("namespaces");
  if (keeper > 0) {
    // K0 waits: its exit is the keeper's.
    close(0);
    int status;
    while (waitpid(keeper, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) keeper_fail("mount");
  int failed_at;
  if (mount_list(fields.items + 5, mount_count, &failed_at) != 0) {
    fprintf(stderr, "sandbox-keeper: mount %s on %s failed: %s\n", fields.items[5 + failed_at * 4], fields.items[5 + failed_at * 4 + 1], strerror(errno));
    keeper_fail("mount");
  }
  char inside[4096];
  snprintf(inside, sizeof inside, "%s%s", skeleton, session_inside);
  // Recursive: the real workspace, bound read-only inside the session folder, comes along (the overlays' lowest layer).
  if (mount(session, inside, NULL, MS_BIND | MS_REC, NULL) != 0) keeper_fail("mount");
  if (chdir(skeleton) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0 || chdir("/") != 0) keeper_fail("pivot");
  loopback_up();
  say("ready %ld\n", host_pid());
  keeper_loop();
  return 0;
}
