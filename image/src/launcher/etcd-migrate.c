/*
 * /usr/local/bin/etcd-migrate in the image: runs the runner as the image's entrypoint does, so that
 * `kubectl exec POD -- etcd-migrate status ...` and `crictl exec ID etcd-migrate status ...` work in a
 * container that has no shell. It replaces itself (execve) with the entrypoint's JVM command line followed
 * by its own arguments, and keeps the environment (TARGET_VERSION and the other variables of the pod).
 *
 * Why C and no C library: the image has no shell to run a script, and the JVM's own launcher cannot carry
 * options and a jar under another name. Built freestanding (-nostdlib, static, no loader), the program is a
 * few kilobytes whose bytes depend on the compiler alone, not on the build machine's C library, so the image
 * stays reproducible; the price is a startup routine and three system calls per architecture, below.
 *
 * ENTRYPOINT must equal image/pom.xml's <entrypoint> (LauncherTest checks it).
 */

static const char *const ENTRYPOINT[] = {
    "/opt/java/bin/java",
    "--enable-native-access=ALL-UNNAMED",
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-XX:-UsePerfData",
    "-XX:CompileThresholdScaling=20",
    "-XX:UserThreadWaitAttemptsAtExit=0",
    "-Djdk.reflect.useNativeAccessorOnly=true",
    "-XX:AOTCache=/app/etcd-migrate.aot",
    "-Xlog:aot=off",
    "-Xlog:cds=off",
    "-jar",
    "/app/etcd-migrate-runner.jar",
};

#define ENTRYPOINT_WORDS (sizeof ENTRYPOINT / sizeof ENTRYPOINT[0])

#if defined(__x86_64__)
#define SYS_WRITE 1
#define SYS_EXECVE 59
#define SYS_EXIT_GROUP 231

static long syscall3(long n, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

/* The kernel leaves argc, argv[], NULL, envp[], NULL at the stack pointer. */
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  xor %ebp, %ebp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call launch\n"
        "  hlt\n");
#elif defined(__aarch64__)
#define SYS_WRITE 64
#define SYS_EXECVE 221
#define SYS_EXIT_GROUP 94

static long syscall3(long n, long a, long b, long c) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}

__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  mov x29, #0\n"
        "  mov x30, #0\n"
        "  mov x0, sp\n"
        "  bl launch\n"
        "  brk #0\n");
#else
#error "no startup routine for this architecture"
#endif

static unsigned long length(const char *s) {
    unsigned long n = 0;
    while (s[n]) n++;
    return n;
}

static void say(const char *s) {
    syscall3(SYS_WRITE, 2, (long)s, (long)length(s));
}

__attribute__((noreturn, used)) void launch(long *stack) {
    long argc = stack[0];
    char **argv = (char **)(stack + 1);
    char **envp = argv + argc + 1;
    const char *args[ENTRYPOINT_WORDS + (argc > 0 ? argc : 1)];
    unsigned long n = 0;
    for (unsigned long i = 0; i < ENTRYPOINT_WORDS; i++) args[n++] = ENTRYPOINT[i];
    for (long i = 1; i < argc; i++) args[n++] = argv[i];
    args[n] = 0;
    long err = -syscall3(SYS_EXECVE, (long)ENTRYPOINT[0], (long)args, (long)envp);
    /* Only reached when the exec failed: say so with the errno, as a shell would exit 126/127. */
    char digits[24];
    int d = sizeof digits - 1;
    digits[d] = 0;
    do {
        digits[--d] = (char)('0' + err % 10);
        err /= 10;
    } while (err > 0 && d > 0);
    say("etcd-migrate: cannot execute ");
    say(ENTRYPOINT[0]);
    say(" (errno ");
    say(digits + d);
    say(")\n");
    for (;;) syscall3(SYS_EXIT_GROUP, 127, 0, 0);
}
