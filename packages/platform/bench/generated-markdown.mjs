// A deterministic Markdown file for the benches that index through kbchat:
// `sections` sections of a heading and a paragraph of ~60 words, each about
// one 100-token chunk of the embedded default.
const WORDS = (
  'the report office customer refund policy battery laptop meeting friday hospital recipe river mountain weather spring ' +
  'warehouse printer label invoice shipment supplier contract budget schedule engineer network server backup storage ' +
  'quarter revenue market product release feature request support ticket manager team project deadline training ' +
  'safety inspection vehicle route delivery airport station harbour museum library garden kitchen school student teacher'
).split(' ');

export function generatedMarkdown(sections, seed) {
  let s = seed >>> 0;
  const rand = () => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const word = () => WORDS[Math.floor(rand() * WORDS.length)];
  const sentence = () => {
    const w = Array.from({ length: 8 + Math.floor(rand() * 8) }, word);
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    return `${w.join(' ')}.`;
  };
  const out = [];
  for (let i = 0; i < sections; i++) out.push(`## ${word()} ${word()} ${seed}-${i}\n\n${Array.from({ length: 5 }, sentence).join(' ')}`);
  return out.join('\n\n');
}
