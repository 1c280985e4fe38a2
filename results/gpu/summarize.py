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

speed = {}
for name, rate in re.findall(r'^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+.*?([\d.e+]+) tokens/s', read('bench.log'), re.M):
    speed.setdefault(name, []).append(float(rate))
torch = {}
for kind, b, rate in re.findall(r'round \d+ (train|eval) B(\d+): pytorch \S+ \w+: (\d+) tokens/s', read('torch.log')):
    torch.setdefault(f'{kind}/B{b}', []).append(float(rate))

figures = {}
for name, rates in sorted(speed.items()):
    m = re.match(r'GPU(Train|Eval)PTB/(\S+)/B(\d+)$', name)
    fig = {'tokens_per_s': rates, 'median': statistics.median(rates)}
    if m:
        ref = torch.get(f'{m.group(1).lower()}/B{m.group(3)}')
        if ref:
            fig['pytorch_tokens_per_s'] = ref
            fig['ratio_to_pytorch'] = statistics.median(rates) / statistics.median(ref)
    figures[name] = fig

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
               'total': len(results), 'failures': failed, 'skips': skipped, 'crashed': bool(crashed)},
    'speed': figures,
    'pytorch': {k: {'tokens_per_s': v, 'median': statistics.median(v)} for k, v in sorted(torch.items())},
    'cfl_rns_2_3_epoch_seconds': cfl,
}
with open(os.path.join(out, 'summary.json'), 'w') as f:
    json.dump(summary, f, indent=2)
print(json.dumps(summary['checks']))
for k, v in cfl.items():
    print('CFL epoch, rns 2-3, device', k, v)
for k, v in figures.items():
    print(k, round(v['median']), 'tokens/s', ('%.2f× PyTorch' % v['ratio_to_pytorch']) if 'ratio_to_pytorch' in v else '')
