// The scale-out bench's CPU quotas (cgroup.ts): a busy child in a group is held to its quota.
import {spawn} from 'node:child_process';
import {existsSync, readFileSync} from 'node:fs';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {cpuController, createCpuGroup} from './cgroup.js';
import {cpuMs, now} from './lib.js';

const ctl = cpuController();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if ('skip' in ctl) {
  console.log(`SKIPPED cgroup quota test: ${ctl.skip}`);
} else {
  test('a busy child in a group with a 0.2-core quota is throttled and uses no more than its quota', async () => {
    const group = createCpuGroup(ctl, 'test-busy', 0.2);
    const {command, args} = group.wrap(process.execPath, ['-e', 'for (;;) {}']);
    const child = spawn(command, args, {stdio: 'ignore'});
    try {
      const start = now();
      // The shell moves itself in before it becomes node: wait for node, same pid.
      const argv0 = () => readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0')[0];
      while (argv0() !== process.execPath && now() - start < 30_000) await sleep(10);
      assert.ok(readFileSync(`${group.dir}/cgroup.procs`, 'utf8').split('\n').includes(String(child.pid)));
      const before = group.stat();
      const cpu0 = cpuMs(child.pid!);
      const t0 = now();
      // Unthrottled, a busy loop would use every period in full; wait until the quota has bitten.
      while (group.stat().throttled - before.throttled < 3 && now() - start < 30_000) await sleep(100);
      await sleep(1000);
      const used = cpuMs(child.pid!) - cpu0;
      const elapsed = now() - t0;
      const after = group.stat();
      assert.ok(after.throttled - before.throttled >= 3, `throttled ${after.throttled - before.throttled} times`);
      assert.ok(after.throttledMs > before.throttledMs);
      // An upper bound the scheduler guarantees, not a speed: 0.2 of the time, plus one period's
      // quota and the 10 ms granularity of /proc's CPU times.
      assert.ok(used <= 0.2 * elapsed + 20 + 10, `used ${used} ms of CPU in ${elapsed.toFixed(0)} ms`);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => (child.exitCode !== null || child.signalCode ? r(null) : child.once('exit', r)));
      group.remove();
    }
    assert.not.ok(existsSync(group.dir), 'the group is removed');
  });

  test('a group holding this process is left for the one it came from, then removed', () => {
    const own = () => readFileSync('/proc/self/cgroup', 'utf8');
    const before = own();
    const group = createCpuGroup(ctl, 'test-self', null, 2);
    group.enter();
    assert.ok(own().includes(group.dir.slice(ctl.root.length)), own());
    group.remove();
    assert.is(own(), before);
    assert.not.ok(existsSync(group.dir));
  });

  test('a quota of 0 or below is refused before any group is made', () => {
    assert.throws(() => createCpuGroup(ctl, 'test-zero', 0), /above 0/);
  });
}

test.run();
