"""Writes summary.json from the logs of check.sh: python3 summarize.py OUT."""
import json, os, re, statistics, sys

out = sys.argv[1]


def read(name):
    try:
        return open(os.path.join(out, name)).read()
    except OSError:
        return ''


env = dict(line.split(': ', 1) for line in read('env.txt').splitlines() if ': ' in line)
tests = read('tests.log')
results = re.findall(r'^\s*--- (PASS|FAIL|SKIP): (\S+)', tests, re.M)
failed = [n for r, n in results if r == 'FAIL']
skipped = [n for r, n in results if r == 'SKIP']
passed = [n for r, n in results if r == 'PASS']
crashed = 'panic:' in tests or re.search(r'^FAIL\s*$', tests, re.M) is not None and not failed
# A test step killed at its time limit (check.sh writes its exit status).
timed_out = len(re.findall(r'^exit (124|137)$', tests, re.M))
crashed = crashed or timed_out > 0

speed = {}
for name, rate in re.findall(r'^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+.*?([\d.e+]+) tokens/s', read('bench.log'), re.M):
    speed.setdefault(name, []).append(float(rate))
# Whether each benchmark's engine kept its CUDA graphs and its second
# stream to the end (either turns off for good after a failure).
modes = {}
for name, graphs, pipeline in re.findall(r'^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+.*?([\d.]+) graphs\s+([\d.]+) pipeline', read('bench.log'), re.M):
    mode = modes.setdefault(name, {'graphs': True, 'pipeline': True})
    mode['graphs'] = mode['graphs'] and float(graphs) == 1
    mode['pipeline'] = mode['pipeline'] and float(pipeline) == 1
torch = {}
for kind, b, rate in re.findall(r'round \d+ (train|eval) B(\d+): pytorch \S+ \w+: (\d+) tokens/s', read('torch.log')):
    torch.setdefault(f'{kind}/B{b}', []).append(float(rate))

figures = {}
for name, rates in sorted(speed.items()):
    m = re.match(r'GPU(Train|Eval)PTB/(\S+)/B(\d+)$', name)
    fig = {'tokens_per_s': rates, 'median': statistics.median(rates)}
    if name in modes:
        fig.update(modes[name])
    if m:
        ref = torch.get(f'{m.group(1).lower()}/B{m.group(3)}')
        if ref:
            fig['pytorch_tokens_per_s'] = ref
            fig['ratio_to_pytorch'] = statistics.median(rates) / statistics.median(ref)
    figures[name] = fig

# The CFL step: seconds per 200 strings on the GPU (GPUTrainStepCFL) and
# on two CPU cores (TrainStep, ns/op of one batch of 10).
cflstep = {}
for name, ns in re.findall(r'^Benchmark(GPUTrainStepCFL/\S+?|TrainStep/\S+?)(?:-\d+)?\s+\d+\s+(\d+) ns/op', read('bench.log'), re.M):
    cflstep.setdefault(name, []).append(float(ns) * 1e-9 * 20)

# The profiles: per benchmark (the last table of each name), the device
# time and operations per token, and the three costliest operations; those
# of the fused and persistent LSTM steps under the names their rates have
# in bench.log (model+fused, model+persistent).
profiles = {}
for file, suffix in (('profile.txt', ''), ('profile-fused.txt', '+fused'), ('profile-persistent.txt', '+persistent')):
    for block in read(file).split('\n== ')[0:]:
        block = block.lstrip('= ')
        lines = block.splitlines()
        if not lines:
            continue
        name = lines[0].split(' (')[0].replace('Benchmark', '', 1)
        if suffix:
            name = re.sub(r'^(GPU(?:Train|Eval)PTB/[^/]+)/', r'\g<1>' + suffix + '/', name)
        prof = {}
        for line in lines[1:]:
            m = re.match(r'per token: ([\d.]+) operations, ([\d.]+) device µs', line)
            if m:
                prof['operations_per_token'] = float(m.group(1))
                prof['device_us_per_token'] = float(m.group(2))
                prof['device_bound_tokens_per_s'] = 1e6 / float(m.group(2)) if float(m.group(2)) > 0 else None
        rows = [l for l in lines[2:] if re.match(r'^\S.*\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+%', l)]
        prof['top'] = [re.sub(r'\s+', ' ', r).strip() for r in rows[:3]]
        if 'device_us_per_token' in prof:
            profiles[name] = prof
# Benchmarks that failed (a kernel error, a grid barrier that timed out):
# their rates are missing from speed, their names are here.
bench_failures = sorted(set(re.findall(r'^\s*--- FAIL: Benchmark(\S+)', read('bench.log'), re.M)))
for name, fig in figures.items():
    p = profiles.get(name)
    if p and p.get('device_bound_tokens_per_s'):
        fig['device_bound_tokens_per_s'] = p['device_bound_tokens_per_s']
        fig['fraction_of_device_bound'] = fig['median'] / p['device_bound_tokens_per_s']

# The programs end to end: the CFL epochs of RNS 2-3 on the GPU and on two
# CPU cores (e2e.log: a "$ cfl train --device D (rns ..." line, then the
# run's epoch_seconds).
cfl = {}
dev = None
for line in read('e2e.log').splitlines():
    m = re.match(r'\$ cfl train --device (\w+) \(rns', line)
    if m:
        dev = m.group(1)
        continue
    if line.startswith('$ '):
        dev = None
    m = re.match(r'"epoch_seconds":([\d.]+)', line)
    if m and dev:
        cfl.setdefault(dev, []).append(float(m.group(1)))

summary = {
    'gpu': env.get('gpu', ''),
    'cuda': env.get('cuda', ''),
    'commit': env.get('commit', ''),
    'date': env.get('date', ''),
    'python': env.get('python', ''),
    'checks': {'passed': len(passed), 'failed': len(failed), 'skipped': len(skipped),
               'total': len(results), 'failures': failed, 'skips': skipped, 'crashed': bool(crashed), 'timed_out': timed_out},
    'speed': figures,
    'pytorch': {k: {'tokens_per_s': v, 'median': statistics.median(v)} for k, v in sorted(torch.items())},
    'cfl_rns_2_3_epoch_seconds': cfl,
    'cfl_step_seconds_per_200_strings': cflstep,
    'profiles': profiles,
    'bench_failures': bench_failures,
}
with open(os.path.join(out, 'summary.json'), 'w') as f:
    json.dump(summary, f, indent=2)
print(json.dumps(summary['checks']))
for k, v in cfl.items():
    print('CFL epoch, rns 2-3, device', k, v)
for k, v in sorted(cflstep.items()):
    print('CFL step,', k, ['%.3f s / 200 strings' % x for x in v])
for k, v in figures.items():
    print(k, round(v['median']), 'tokens/s', ('%.2f× PyTorch' % v['ratio_to_pytorch']) if 'ratio_to_pytorch' in v else '',
          ('%.2f of the device-bound rate' % v['fraction_of_device_bound']) if 'fraction_of_device_bound' in v else '')
