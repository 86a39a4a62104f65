// landlock-exec: the Landlock + seccomp sandbox's launcher (SANDBOX.md, "Where namespaces are
// refused"). It restricts itself — what may be read, written and reached, how many processes, how
// much memory, file size and CPU time — and then runs the command, which inherits every rule.
// No privilege and no namespace needed; Linux UAPI headers only, so it builds with any gcc.
//
//   landlock-exec --probe                       prints "landlock-abi N", exit 0 (3: no Landlock)
//   landlock-exec [rules] [limits] -- PROGRAM ARG...
//     --read PATH      read and execute beneath PATH (a folder or a file)
//     --list PATH      list the folder beneath PATH, read no file in it (a parent of hidden files)
//     --write PATH     everything beneath PATH (the run's scratch HOME and TMPDIR)
//     --device PATH    read and write one device file (/dev/null)
//     --nproc N  --as BYTES  --fsize BYTES  --cpu SECONDS
//     --uid UID        as root: the user the command runs as (0: stays root, without capabilities)
//
// Why a parent process stays: it reports the command's exit on fd 3 ("exit N", "fail STEP ERRNO")
// and then kills the command's whole process group, so nothing it started outlives it; when its
// stdin ends (the engine went away) it kills the group too. The command cannot leave the group:
// seccomp refuses setsid and setpgid.
//
// Network: Landlock (ABI >= 4) refuses every TCP bind and connect; seccomp refuses socket() for
// every address family, AF_UNIX included — Landlock cannot yet keep a connect() away from a
// pathname unix socket (the Docker socket, a user's D-Bus), so no new socket may be made at all.
// socketpair() stays (libuv, bash and friends talk to their own children through it). io_uring is
// refused (its operations bypass seccomp). On ABI >= 6 the command may neither connect to an
// abstract unix socket outside the sandbox nor signal a process outside it.
//
// As root, RLIMIT_NPROC binds nobody: the kernel exempts real uid 0 and CAP_SYS_RESOURCE. So root's
// command runs as a user of its own (uid and gid --uid, which the engine picks unused, owner
// of the scratch folder) without any capability; keeping the effective uid 0 is no way out, bash
// and other shells drop an effective uid that differs from the real one. For another user the
// limit is what the user already runs plus N (the kernel counts every thread of the real uid).
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// Landlock's UAPI, written out: distributions' headers lag the kernel (Debian 12's know ABI 2).
struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REFER (1ULL << 13)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "landlock-exec knows the seccomp architecture of x86_64 and aarch64 only"
#endif

#define MAX_RULES 4096
enum kind { READ, LIST, WRITE, DEVICE };
struct rule {
  enum kind kind;
  const char *path;
};

static int control_fd = -1;

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
  if (control_fd < 0) return;
  char line[256];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n > 0) (void)!write(control_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/** Reports the failed step on the control channel and on stderr, and ends with status 125. */
static void fail(const char *step) {
  int saved = errno;
  say("fail %s %d\n", step, saved);
  fprintf(stderr, "landlock-exec: %s: %s\n", step, strerror(saved));
  _exit(125);
}

static int landlock_abi(void) {
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

/** Every file-system right this ABI knows: all of them are handled, so anything not granted is refused. */
static uint64_t fs_rights(int abi) {
  uint64_t rights = (1ULL << 13) - 1; // ABI 1: EXECUTE .. MAKE_SYM
  if (abi >= 2) rights |= LL_FS_REFER;
  if (abi >= 3) rights |= LL_FS_TRUNCATE;
  if (abi >= 5) rights |= LL_FS_IOCTL_DEV;
  return rights;
}

/** Rights a rule on a non-folder may carry (the kernel refuses folder rights on a file). */
static uint64_t file_rights(int abi) {
  return (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV) & fs_rights(abi);
}

static void add_rule(int ruleset, const struct rule *rule, int abi) {
  int fd = open(rule->path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) return; // not on this machine: nothing to grant
    fail("open rule path");
  }
  struct stat info;
  if (fstat(fd, &info) != 0) fail("stat rule path");
  uint64_t access;
  switch (rule->kind) {
  case READ: access = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR; break;
  case LIST: access = LL_FS_READ_DIR; break;
  case WRITE: access = fs_rights(abi); break;
  case DEVICE: access = LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV; break;
  default: access = 0;
  }
  if (!S_ISDIR(info.st_mode)) access &= file_rights(abi);
  access &= fs_rights(abi);
  if (access != 0) {
    struct ll_path_beneath_attr beneath = {.allowed_access = access, .parent_fd = fd};
    if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &beneath, 0) != 0) fail("landlock_add_rule");
  }
  close(fd);
}

static void apply_landlock(const struct rule *rules, int count, int abi) {
  struct ll_ruleset_attr attr = {.handled_access_fs = fs_rights(abi)};
  size_t size = offsetof(struct ll_ruleset_attr, handled_access_net);
  if (abi >= 4) {
    attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    size = offsetof(struct ll_ruleset_attr, scoped);
  }
  if (abi >= 6) {
    attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    size = sizeof attr;
  }
  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) fail("landlock_create_ruleset");
  for (int i = 0; i < count; i++) add_rule(ruleset, &rules[i], abi);
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) fail("landlock_restrict_self");
  close(ruleset);
}

#define DENY(nr, err) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err))

static void apply_seccomp(void) {
  struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
    // x32 system calls reach the same kernel functions under other numbers: none of them.
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
    DENY(__NR_socket, EACCES),
    DENY(__NR_setsid, EPERM),
    DENY(__NR_setpgid, EPERM),
    DENY(__NR_io_uring_setup, ENOSYS),
    DENY(__NR_io_uring_enter, ENOSYS),
    DENY(__NR_io_uring_register, ENOSYS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};
  if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) fail("seccomp");
}

/** Threads the real uid runs now, all over the machine: what RLIMIT_NPROC counts. */
static long threads_of(uid_t uid) {
  DIR *proc = opendir("/proc");
  if (!proc) return -1;
  long total = 0;
  char path[300], text[4096];
  for (struct dirent *entry; (entry = readdir(proc)) != NULL;) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/status", entry->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) continue;
    text[n] = '\0';
    char *uid_line = strstr(text, "\nUid:");
    char *threads_line = strstr(text, "\nThreads:");
    if (!uid_line || !threads_line) continue;
    if ((uid_t)strtoul(uid_line + 5, NULL, 10) == uid) total += strtol(threads_line + 9, NULL, 10);
  }
  closedir(proc);
  return total;
}

static void limit(int resource, rlim_t value, const char *step) {
  struct rlimit current;
  if (getrlimit(resource, &current) != 0) fail(step);
  // Never above what we were given: the hard limit only goes down.
  rlim_t soft = current.rlim_max != RLIM_INFINITY && value > current.rlim_max ? current.rlim_max : value;
  struct rlimit wanted = {.rlim_cur = soft, .rlim_max = soft};
  if (resource == RLIMIT_CPU) wanted.rlim_max = current.rlim_max == RLIM_INFINITY || soft + 2 <= current.rlim_max ? soft + 2 : current.rlim_max;
  if (setrlimit(resource, &wanted) != 0) fail(step);
}

/**
 * Root's command becomes a user of its own (uid and gid --uid, no supplementary groups, no
 * capability): RLIMIT_NPROC then counts and binds it, and it reads only what any user may.
 */
static void leave_root(uid_t uid) {
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) fail("capbset");
  }
  if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS_LOCKED) != 0) fail("securebits");
  // uid 0: a user namespace that maps root alone has no other uid to become; the command stays root
  // without capabilities, and the process limit cannot bind it (the engine says so).
  if (uid == 0) return;
  if (setgroups(0, NULL) != 0) fail("setgroups");
  if (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) != 0) fail("setresgid");
  if (setresuid(uid, uid, uid) != 0) fail("setresuid");
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) fail("ambient caps");
}

static pid_t command_pid = -1;

static void end_group(int signal_number) {
  (void)signal_number;
  if (command_pid > 0) kill(-command_pid, SIGKILL);
  _exit(124);
}

static long number(const char *text, const char *option) {
  char *end;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno || *end || value < 0) {
    fprintf(stderr, "landlock-exec: %s needs a number, not \"%s\"\n", option, text);
    exit(2);
  }
  return (long)value;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    int abi = landlock_abi();
    printf("landlock-abi %d\n", abi);
    return abi > 0 ? 0 : 3;
  }
  static struct rule rules[MAX_RULES];
  int count = 0;
  long nproc = -1, as = -1, fsize = -1, cpu = -1, nproc_uid = -1;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
    const char *option = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "landlock-exec: %s needs a value\n", option);
      return 2;
    }
    const char *value = argv[i + 1];
    enum kind kind;
    if (strcmp(option, "--read") == 0) kind = READ;
    else if (strcmp(option, "--list") == 0) kind = LIST;
    else if (strcmp(option, "--write") == 0) kind = WRITE;
    else if (strcmp(option, "--device") == 0) kind = DEVICE;
    else {
      if (strcmp(option, "--nproc") == 0) nproc = number(value, option);
      else if (strcmp(option, "--as") == 0) as = number(value, option);
      else if (strcmp(option, "--fsize") == 0) fsize = number(value, option);
      else if (strcmp(option, "--cpu") == 0) cpu = number(value, option);
      else if (strcmp(option, "--uid") == 0) nproc_uid = number(value, option);
      else {
        fprintf(stderr, "landlock-exec: unknown option %s\n", option);
        return 2;
      }
      continue;
    }
    if (count == MAX_RULES || value[0] != '/') {
      fprintf(stderr, "landlock-exec: too many rules, or %s is not absolute\n", value);
      return 2;
    }
    rules[count++] = (struct rule){kind, value};
  }
  if (i + 1 >= argc) {
    fprintf(stderr, "usage: landlock-exec [--read|--list|--write|--device PATH]... [--nproc N --as BYTES --fsize BYTES --cpu S] -- PROGRAM ARG...\n");
    return 2;
  }
  char **command = &argv[i + 1];
  struct stat control;
  if (fstat(3, &control) == 0) control_fd = 3;
  int abi = landlock_abi();
  if (abi <= 0) {
    errno = ENOSYS;
    fail("landlock");
  }

  // The command leads a process group of its own (before seccomp forbids it), so one kill ends all it started.
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) fail("pipe");
  pid_t pid = fork();
  if (pid < 0) fail("fork");
  if (pid == 0) {
    close(ready[0]);
    if (setpgid(0, 0) != 0) fail("setpgid");
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail("pdeathsig");
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || dup2(devnull, 0) < 0) fail("stdin");
    if (dup2(1, 2) < 0) fail("stderr"); // one stream, in the order the command wrote it, as the namespace backend gives
    if (control_fd >= 0) close(control_fd);
    control_fd = ready[1]; // a failure below reaches the parent through this pipe
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
    if (fsize >= 0) limit(RLIMIT_FSIZE, (rlim_t)fsize, "fsize");
    if (as >= 0) limit(RLIMIT_AS, (rlim_t)as, "as");
    if (cpu >= 0) limit(RLIMIT_CPU, (rlim_t)cpu, "cpu");
    if (getuid() == 0) {
      leave_root(nproc_uid < 0 ? 0 : (uid_t)nproc_uid);
      if (nproc >= 0) limit(RLIMIT_NPROC, (rlim_t)nproc, "nproc");
    } else if (nproc >= 0) {
      {
        long running = threads_of(getuid());
        if (running < 0) fail("count processes");
        limit(RLIMIT_NPROC, (rlim_t)(running + nproc), "nproc");
      }
    }
    apply_landlock(rules, count, abi);
    apply_seccomp();
    execvp(command[0], command);
    fail("exec");
  }
  command_pid = pid;
  close(ready[1]);
  signal(SIGTERM, end_group);
  signal(SIGHUP, end_group);
  signal(SIGPIPE, SIG_IGN);
  // A failure before exec arrives as a "fail" line; exec closes the pipe without one.
  char failure[128];
  ssize_t got = read(ready[0], failure, sizeof failure - 1);
  close(ready[0]);
  if (got > 0) {
    failure[got] = '\0';
    say("%s", failure);
    waitpid(pid, NULL, 0);
    return 125;
  }
  say("started %d abi %d\n", pid, abi);
  // pidfd (Linux 5.3; Landlock needs 5.13): the command's exit and the engine's lifeline in one poll.
  int exited = (int)syscall(SYS_pidfd_open, pid, 0);
  if (exited < 0) {
    kill(-pid, SIGKILL);
    fail("pidfd_open");
  }
  struct pollfd watch[2] = {{.fd = exited, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
  for (;;) {
    if (poll(watch, 2, -1) < 0) {
      if (errno == EINTR) continue;
      end_group(0);
    }
    if (watch[0].revents) break;
    if (watch[1].revents) {
      char byte;
      if (read(0, &byte, 1) <= 0) end_group(0); // the engine is gone: so is everything the command started
      watch[1].fd = -1;                          // the engine wrote: stdin means nothing more
    }
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) fail("waitpid");
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  kill(-pid, SIGKILL);
  say("exit %d\n", code);
  return code;
}
