// Watermark lengths (`left`, `top`, `bottom`, `width`): `Npx`, `N%`, and `calc()` sums of those.
// DECISIONS (Render): anything else is a 400, so the grammar is deliberately small: no other units,
// no `*` or `/`, no bare numbers except a unitless 0 (which CSS itself allows).
import { invalidInput } from '../invalid-input.js';

export type LengthAst =
  { type: 'px'; value: number } | { type: 'percent'; value: number } | { type: 'calc'; terms: Array<{ sign: 1 | -1; node: LengthAst }> };

const NUMBER = /^(\d+(?:\.\d*)?|\.\d+)/;

class Parser {
  private pos = 0;
  constructor(
    private readonly src: string,
    private readonly fail: (why: string) => never,
  ) {}

  parseTop(): LengthAst {
    this.skipSpace();
    const node = this.peekWord('calc(') ? this.parseCalc() : this.parseSigned(true);
    this.skipSpace();
    if (this.pos < this.src.length) this.fail(`unexpected "${this.src.slice(this.pos)}"`);
    return node;
  }

  private parseCalc(): LengthAst {
    this.pos += 'calc'.length;
    return this.parseGroup();
  }

  // `( term ((+|-) term)* )`
  private parseGroup(): LengthAst {
    this.expect('(');
    const terms: Array<{ sign: 1 | -1; node: LengthAst }> = [];
    this.skipSpace();
    let sign: 1 | -1 = 1;
    if (this.src[this.pos] === '-' || this.src[this.pos] === '+') {
      sign = this.src[this.pos] === '-' ? -1 : 1;
      this.pos++;
    }
    terms.push({ sign, node: this.parseTerm() });
    for (;;) {
      this.skipSpace();
      const c = this.src[this.pos];
      if (c === ')') {
        this.pos++;
        return { type: 'calc', terms };
      }
      if (c !== '+' && c !== '-') this.fail(c === undefined ? 'missing ")"' : `only + and - are allowed in calc(), found "${c}"`);
      this.pos++;
      terms.push({ sign: c === '-' ? -1 : 1, node: this.parseTerm() });
    }
  }

  private parseTerm(): LengthAst {
    this.skipSpace();
    if (this.peekWord('calc(')) return this.parseCalc();
    if (this.src[this.pos] === '(') return this.parseGroup();
    return this.parseSigned(false);
  }

  private parseSigned(allowSign: boolean): LengthAst {
    let sign = 1;
    if (allowSign && (this.src[this.pos] === '-' || this.src[this.pos] === '+')) {
      sign = this.src[this.pos] === '-' ? -1 : 1;
      this.pos++;
    }
    const m = NUMBER.exec(this.src.slice(this.pos));
    if (!m) this.fail(`expected a number at "${this.src.slice(this.pos) || 'end'}"`);
    this.pos += m[0].length;
    const value = sign * Number(m[0]);
    const rest = this.src.slice(this.pos);
    if (rest.toLowerCase().startsWith('px')) {
      this.pos += 2;
      return { type: 'px', value };
    }
    if (rest.startsWith('%')) {
      this.pos += 1;
      return { type: 'percent', value };
    }
    if (value === 0 && !/^[a-z]/i.test(rest)) return { type: 'px', value: 0 };
    return this.fail(`"${m[0]}" needs a px or % unit`);
  }

  private peekWord(word: string): boolean {
    return this.src.slice(this.pos, this.pos + word.length).toLowerCase() === word;
  }

  private expect(c: string): void {
    this.skipSpace();
    if (this.src[this.pos] !== c) this.fail(`expected "${c}"`);
    this.pos++;
  }

  private skipSpace(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos]!)) this.pos++;
  }
}

/** Parses one length; throws a 400 naming `field` when the value is not `Npx`, `N%` or a calc() of those. */
export function parseLength(field: string, value: unknown): LengthAst {
  const fail = (why: string): never => {
    throw invalidInput(`${field} must be a length like "20px", "5%" or "calc(100% - 20px)" (${why})`);
  };
  if (typeof value !== 'string') return fail(`got ${value === null ? 'null' : typeof value}`);
  if (value.trim() === '') return fail('empty');
  if (value.length > 200) return fail('too long');
  return new Parser(value, fail).parseTop();
}

/** Pixels, with `%` taken of `referencePx` (the frame width for left/width, its height for top/bottom). */
export function resolveLength(ast: LengthAst, referencePx: number): number {
  switch (ast.type) {
    case 'px':
      return ast.value;
    case 'percent':
      return (ast.value / 100) * referencePx;
    case 'calc':
      return ast.terms.reduce((sum, t) => sum + t.sign * resolveLength(t.node, referencePx), 0);
  }
}
