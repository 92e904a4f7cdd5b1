/** The README says what each dependency is for: every package of package.json has a row there. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');

describe("the README's dependency table", () => {
  it('names every dependency of package.json', () => {
    const pkg = JSON.parse(read('package.json'));
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('| package | for |'));
    const names = [pkg.dependencies, pkg.devDependencies, pkg.optionalDependencies].flatMap((d) =>
      Object.keys(d ?? {}),
    );
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((n) => !table.includes(`\`${n}\``))).toEqual([]);
  });
});
