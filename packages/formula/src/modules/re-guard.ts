/**
 * Regular expressions that cannot hang the server. V8's backtracking engine cannot be interrupted
 * by the formula budget's clock checks: `re.match("(a*)*b", "a" * 40)` runs for hours (issue 37).
 * Its linear-time fallback does not take the `u`, `d` or `i` flags this module's patterns need (Node
 * 20's V8 11.3 refuses them with `/l`). So each translated pattern is rated once: a pattern with
 * a quantified group that holds a quantifier or an alternation, or a backreference, can take
 * exponential time; any other takes at most about n^(k+1) steps for k unbounded quantifiers on a
 * text of n characters. Those whose bound is small for the text run directly; the rest run under
 * `vm`'s watchdog, which interrupts even a backtracking regex, with what is left of the cell's
 * time budget. The watchdog costs about 0.1 ms a call (a thread per call, measured on Node 20),
 * which is why it is kept for the patterns and texts that need it.
 */
import {Script, createContext} from 'node:vm';
import {currentBudget} from '../budget.js';
import {raise} from '../values.js';

export interface RegexRisk {
  /** A quantified group holding a quantifier or alternation, or a backreference: exponential. */
  exponential: boolean;
  /** Unbounded quantifiers (or bounded ones with a wide range): the degree of the polynomial. */
  degree: number;
  /** log10 of the constant factor from small bounded quantifiers (`?`, `{1,3}`). */
  logFactor: number;
}

/** log10 of the steps a pattern may take directly (about ten million: tens of milliseconds). */
const LOG_DIRECT_STEPS = 7;
/** A bounded quantifier with a range wider than this counts as unbounded. */
const WIDE_RANGE = 16;

interface Frame {
  variable: boolean;
  alternation: boolean;
}

/** Rates a JS pattern (the `u`-mode syntax `translate` writes). */
export function rateRegex(src: string): RegexRisk {
  const risk: RegexRisk = {exponential: false, degree: 0, logFactor: 0};
  const stack: Frame[] = [{variable: false, alternation: false}];
  // What a following quantifier would repeat: a simple atom, a closed group, or nothing.
  let last: Frame | null = null;
  let i = 0;
  const n = src.length;
  const skipTo = (close: string) => {
    const j = src.indexOf(close, i);
    i = j < 0 ? n : j + 1;
  };
  while (i < n) {
    const c = src[i];
    if (c === '\\') {
      const e = src[i + 1];
      i += 2;
      if (e === 'k' || (e >= '1' && e <= '9')) {
        risk.exponential = true; // a backreference: matching is NP-hard in general
        if (e === 'k') skipTo('>');
        else while (i < n && src[i] >= '0' && src[i] <= '9') i++;
      } else if ((e === 'p' || e === 'P' || e === 'u') && src[i] === '{') skipTo('}');
      else if (e === 'u') i += 4;
      else if (e === 'x') i += 2;
      else if (e === 'c') i += 1;
      last = {variable: false, alternation: false};
      continue;
    }
    if (c === '[') {
      i++;
      while (i < n && src[i] !== ']') i += src[i] === '\\' ? 2 : 1;
      i++;
      last = {variable: false, alternation: false};
      continue;
    }
    if (c === '(') {
      i++;
      if (src[i] === '?') {
        if (src[i + 1] === '<' && src[i + 2] !== '=' && src[i + 2] !== '!') skipTo('>');
        else i += src[i + 1] === '<' ? 3 : 2;
      }
      stack.push({variable: false, alternation: false});
      last = null;
      continue;
    }
    if (c === ')') {
      i++;
      const f = stack.length > 1 ? stack.pop()! : stack[0];
      const parent = stack[stack.length - 1];
      parent.variable ||= f.variable;
      parent.alternation ||= f.alternation;
      last = f;
      continue;
    }
    if (c === '|') {
      i++;
      stack[stack.length - 1].alternation = true;
      last = null;
      continue;
    }
    let lo = -1;
    let hi = -1;
    if (c === '*' || c === '+' || c === '?') {
      lo = c === '+' ? 1 : 0;
      hi = c === '?' ? 1 : Infinity;
      i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i, i + 40));
      if (m) {
        lo = Number(m[1]);
        hi = m[2] === undefined ? lo : m[3] === '' ? Infinity : Number(m[3]);
        i += m[0].length;
      }
    }
    if (lo < 0) {
      i++;
      last = {variable: false, alternation: false};
      continue;
    }
    if (src[i] === '?') i++; // lazy: the same steps in another order
    const frame = stack[stack.length - 1];
    // A group repeated more than once whose own matching has choices: the choices multiply.
    if (last && (last.variable || last.alternation) && hi > 1) risk.exponential = true;
    if (hi !== lo) {
      frame.variable = true;
      if (hi - lo > WIDE_RANGE) risk.degree++;
      else risk.logFactor += Math.log10(hi - lo + 1);
    }
    last = null;
  }
  return risk;
}

/** True when a pattern of this risk may run directly on a text of `length` code units. */
export function runsDirectly(risk: RegexRisk, length: number): boolean {
  if (risk.exponential) return false;
  return (risk.degree + 1) * Math.log10(length + 2) + risk.logFactor <= LOG_DIRECT_STEPS;
}

const context = createContext({});
const script = new Script('work()');

/** Runs `work` under a watchdog: TimeoutError when the cell's time runs out first. */
export function underWatchdog<T>(work: () => T): T {
  const sandbox = context as {work?: () => T};
  sandbox.work = work;
  try {
    return script.runInContext(context, {timeout: currentBudget.cellMsLeft()}) as T;
  } catch (e) {
    if ((e as {code?: string}).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      return raise('TimeoutError', 'regular expression took too long (catastrophic backtracking)');
    }
    throw e;
  } finally {
    sandbox.work = undefined;
  }
}

/** `regex.exec(text)`, directly when the pattern's rating allows it for this text. */
export function safeExec(regex: RegExp, risk: RegexRisk, text: string): RegExpExecArray | null {
  return runsDirectly(risk, text.length) ? regex.exec(text) : underWatchdog(() => regex.exec(text));
}

/** The next match of a global regex, stepping past an empty match as Python 3.7+ (and JS) do. */
function nextMatch(regex: RegExp, text: string): RegExpExecArray | null {
  if (regex.lastIndex > text.length) return null;
  const m = regex.exec(text);
  if (m && m[0] === '') {
    const c = text.charCodeAt(regex.lastIndex);
    regex.lastIndex += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
  }
  return m;
}

/** Matches per watchdog call: one call costs about 0.1 ms, and the batch is held in memory. */
const GUARDED_BATCH = 10_000;

/** Every match of a global regex from its lastIndex, at most `limit`, guarded as `safeExec`. */
export function* safeMatches(
  regex: RegExp,
  risk: RegexRisk,
  text: string,
  limit = Infinity,
): Generator<RegExpExecArray> {
  let left = limit;
  if (runsDirectly(risk, text.length)) {
    for (; left > 0; left--) {
      const m = nextMatch(regex, text);
      if (!m) return;
      yield m;
    }
    return;
  }
  for (;;) {
    const want = Math.min(left, GUARDED_BATCH);
    const batch = underWatchdog(() => {
      const out: RegExpExecArray[] = [];
      while (out.length < want) {
        const m = nextMatch(regex, text);
        if (!m) break;
        out.push(m);
      }
      return out;
    });
    yield* batch;
    left -= batch.length;
    if (batch.length < want || left <= 0) return;
  }
}
