#!/usr/bin/env python3
"""etcd 3.6/3.7 start race (docs/etcd-start-panic.md): seed a 3.7.3 single member with 300 keys (its WAL
holds only the index-0 snapshot record), then per trial copy it, in mode "kill" SIGKILL a start at a seeded
random moment of 0-600 ms, start etcd 3.7.3 with the runner's private-etcd flags and await a write; count raft's
"error scanning unapplied entries" panics and the near misses (a campaign refused for an unapplied conf change).
Usage: etcd-start-race.py WORKDIR TRIALS [SEED] [kill|restart]; env PIN=cpu (taskset), EXTRA="--flags", GOMAXPROCS."""
import base64, json, os, random, shutil, signal, socket, subprocess, sys, time, urllib.request

ETCD = os.path.expanduser("~/.cache/etcd-migrate/bin/etcd-3.7.3")
root = sys.argv[1]; trials = int(sys.argv[2]); seed = int(sys.argv[3]) if len(sys.argv) > 3 else time.time_ns()
mode = sys.argv[4] if len(sys.argv) > 4 else "kill"   # kill | restart (no kill: start, await ready, SIGTERM)
print(f"seed {seed} trials {trials} mode {mode} PIN={os.environ.get('PIN')} GOMAXPROCS={os.environ.get('GOMAXPROCS')} EXTRA={os.environ.get('EXTRA')}", flush=True)
rnd = random.Random(seed)
PANIC = b"error scanning unapplied entries"

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def start(data, log):
    c, p = free_port(), free_port()
    args = [ETCD, "--name", "it", "--data-dir", data,
            "--listen-client-urls", f"http://127.0.0.1:{c}", "--advertise-client-urls", f"http://127.0.0.1:{c}",
            "--listen-peer-urls", f"http://127.0.0.1:{p}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{p}",
            "--initial-cluster", f"it=http://127.0.0.1:{p}", "--heartbeat-interval=10", "--election-timeout=100",
            "--log-outputs=stderr", "--quota-backend-bytes=2147483648"]
    args += os.environ.get("EXTRA", "").split()
    f = open(log, "wb")
    if os.environ.get("PIN"): args = ["taskset", "-c", os.environ["PIN"]] + args
    return subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT), c

def put(c, k, v):
    body = json.dumps({"key": base64.b64encode(k.encode()).decode(), "value": base64.b64encode(v.encode()).decode()})
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{c}/v3/kv/put", body.encode()), timeout=2).read()

def await_write(proc, c, deadline):
    while time.monotonic() < deadline:
        if proc.poll() is not None: return False
        try: put(c, "probe", "x"); return True
        except Exception: time.sleep(0.01)
    return False

def seed_data(data):
    proc, c = start(data, data + ".seed.log")
    assert await_write(proc, c, time.monotonic() + 20), "seed etcd did not accept a write"
    for i in range(300): put(c, f"/k/{i:04d}", "v" * 50)
    proc.send_signal(signal.SIGTERM); proc.wait(10)

tmpl = os.path.join(root, "template")
if not os.path.isdir(tmpl):
    os.makedirs(root, exist_ok=True); seed_data(tmpl)
took = []; near = []; panics = []; t0 = time.time()
for t in range(1, trials + 1):
    data = os.path.join(root, "data"); shutil.rmtree(data, ignore_errors=True)
    subprocess.run(["cp", "-a", "--sparse=always", tmpl, data], check=True)
    delay = rnd.uniform(0, 0.6)
    runs = []
    if mode == "kill":
        proc, c = start(data, os.path.join(root, "a.log")); time.sleep(delay)
        died = proc.poll() is not None; proc.kill(); proc.wait()
        runs.append(("killed", os.path.join(root, "a.log"), died))
    began = time.monotonic(); proc, c = start(data, os.path.join(root, "b.log"))
    ok = await_write(proc, c, time.monotonic() + 5)
    if ok: took.append(time.monotonic() - began)
    died = proc.poll() is not None
    proc.send_signal(signal.SIGTERM); 
    try: proc.wait(5)
    except subprocess.TimeoutExpired: proc.kill(); proc.wait()
    runs.append(("rerun", os.path.join(root, "b.log"), died))
    for name, log, d in runs:
        if b"pending configuration changes to apply" in open(log, "rb").read():
            near.append((t, name))
            if len(near) <= 3: shutil.copy(log, os.path.join(root, f"near-{t}-{name}.log"))
        if PANIC in open(log, "rb").read():
            keep = os.path.join(root, f"panic-{t}-{name}.log"); shutil.copy(log, keep)
            panics.append((t, name, round(delay * 1000)))
            moment = f" (the killed start: SIGKILL at {delay*1000:.0f} ms)" if mode == "kill" else ""
            print(f"trial {t}: PANIC in the {name} start{moment} -> {keep}", flush=True)
    if t % 25 == 0:
        print(f"{t} trials, {len(panics)} panics, {len(near)} near misses (hup refused: unapplied conf change), {time.time()-t0:.0f} s", flush=True)
    shutil.rmtree(data, ignore_errors=True)
print(f"done: seed {seed}, {trials} trials ({mode}), panics {len(panics)}: {panics}; near misses {len(near)}; start to first write median {sorted(took)[len(took)//2]*1000 if took else 0:.0f} ms", flush=True)
