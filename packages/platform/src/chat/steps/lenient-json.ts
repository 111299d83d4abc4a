// Models asked for "only a JSON object" often wrap it in prose or a code
// fence, or write JavaScript-ish JSON. This finds the first object in the text
// that can be read and rewrites it to strict JSON: comments dropped, single
// quotes, unquoted keys and trailing commas accepted, Python's True/False/None
// read as true/false/null, raw line breaks inside strings escaped, and a bare
// word after ':' read as a string ({type: billing}). No dependency: json5 would
// still need the scanner below and rejects the Python and bare-word forms.

/** Longest text scanned: a model answer is small; this bounds the cost of pathological input. */
const MAX_TEXT = 200_000;

/** The first `{...}` in `text` that parses (leniently) to an object, or undefined. */
export function parseFirstJsonObject(text: string): Record<string, unknown> | undefined {
  const s = text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
  for (let start = s.indexOf('{'); start >= 0; start = s.indexOf('{', start + 1)) {
    const strict = toStrictJson(s, start);
    if (strict === undefined) continue;
    try {
      const value: unknown = JSON.parse(strict);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // not an object after all: try the next '{'
    }
  }
  return undefined;
}

const IDENT_START = /[A-Za-z_$]/;
const IDENT_PART = /[\w$]/;
const PYTHON_LITERALS: Record<string, string> = { True: 'true', False: 'false', None: 'null' };

/**
 * Rewrites the balanced value that opens at `start` to strict JSON, or
 * undefined when it never closes. Whitespace outside strings is dropped, so
 * the last output character is always the last significant one.
 */
function toStrictJson(s: string, start: number): string | undefined {
  const closers: string[] = [];
  let out = '';
  let i = start;
  while (i < s.length) {
    const c = s[i];
    if (c === '"' || c === "'") {
      const read = readString(s, i);
      if (!read) return undefined;
      out += read.json;
      i = read.end;
      continue;
    }
    if (c === '/' && s[i + 1] === '/') {
      const nl = s.indexOf('\n', i);
      i = nl < 0 ? s.length : nl;
      continue;
    }
    if (c === '/' && s[i + 1] === '*') {
      const end = s.indexOf('*/', i + 2);
      if (end < 0) return undefined;
      i = end + 2;
      continue;
    }
    if (c === '{' || c === '[') {
      closers.push(c === '{' ? '}' : ']');
      out += c;
      i++;
      continue;
    }
    if (c === '}' || c === ']') {
      if (closers.pop() !== c) return undefined;
      if (out.endsWith(',')) out = out.slice(0, -1); // trailing comma
      out += c;
      i++;
      if (closers.length === 0) return out;
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < s.length && IDENT_PART.test(s[j])) j++;
      const word = s.slice(i, j);
      let k = j;
      while (k < s.length && /\s/.test(s[k])) k++;
      if (s[k] === ':')
        out += JSON.stringify(word); // unquoted key
      else if (word === 'true' || word === 'false' || word === 'null') out += word;
      else if (PYTHON_LITERALS[word]) out += PYTHON_LITERALS[word];
      else if (out.endsWith(':'))
        out += JSON.stringify(word); // a bare word as a value
      else out += word; // left as is: JSON.parse will refuse it
      i = j;
      continue;
    }
    if (!/\s/.test(c)) out += c;
    i++;
  }
  return undefined;
}

/** A quoted string (either quote) from `at`, as a JSON string; undefined when it never closes. */
function readString(s: string, at: number): { json: string; end: number } | undefined {
  const quote = s[at];
  let body = '';
  for (let i = at + 1; i < s.length; i++) {
    const c = s[i];
    if (c === quote) return { json: `"${body}"`, end: i + 1 };
    if (c === '\\') {
      const next = s[i + 1];
      if (next === undefined) return undefined;
      if (next === "'") body += "'";
      else if (next === '\n')
        body += ''; // a JS line continuation
      else if ('"\\/bfnrtu'.includes(next)) body += c + next;
      else body += next; // an escape JSON lacks (\x, \a): keep the character
      i++;
      continue;
    }
    if (c === '"') body += '\\"';
    else if (c === '\n') body += '\\n';
    else if (c === '\r') body += '\\r';
    else if (c === '\t') body += '\\t';
    else if (c < ' ') body += `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else body += c;
  }
  return undefined;
}
