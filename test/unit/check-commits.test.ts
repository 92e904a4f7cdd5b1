/**
 * scripts/check-commits.sh, which .ci/run runs before the tests: on a repository of its own, the
 * commits made since CONTRIBUTING.md was added must have a subject of at most 72 characters, a
 * blank line and a body; the ones before it are not checked.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-commits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const git = (...args: string[]) => {
  const r = spawnSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
};
let n = 0;
const commit = (message: string, file = `f${n++}`) => {
  writeFileSync(join(dir, file), String(n));
  git('add', '-A');
  git('commit', '-q', '-m', message);
};
const check = () => spawnSync('bash', [join(ROOT, 'scripts', 'check-commits.sh'), dir], { encoding: 'utf8' });

describe('scripts/check-commits.sh', () => {
  it('passes what follows the rule, and refuses a long subject, a missing blank line or body', () => {
    git('init', '-q');
    commit(`An old commit from before the rule, whose subject runs far past seventy-two characters`);
    commit('Adopt the rule for commit messages\n\nWhy: a history a reviewer can skim.', 'CONTRIBUTING.md');
    commit('Make the consumers complete an insert cut short\n\nBefore: 149 balances. After: 143.');
    let r = check();
    expect(r.stdout, r.stderr).toMatch(/1 commits since CONTRIBUTING.md, every message as/);
    expect(r.status).toBe(0);

    commit(`Make ${'a very '.repeat(10)}long subject\n\nA body.`);
    commit('A subject with no body');
    commit('A subject ending with a period.\n\nA body.');
    commit('A subject\nrunning on with no blank line');
    r = check();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/subject is 87 characters \(at most 72\)/);
    expect(r.stderr).toMatch(/"A subject with no body": no body saying why/);
    expect(r.stderr).toMatch(/"A subject ending with a period\.": subject ends with a period/);
    expect(r.stderr).toMatch(/"A subject running on with no blank line": no blank line after the subject/);
    expect(r.stderr).toMatch(/4 of 5 commits since CONTRIBUTING.md break its rule/);
  });
});
