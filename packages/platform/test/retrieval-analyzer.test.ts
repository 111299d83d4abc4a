// The full-text analyzer: Lucene-English-like terms, CJK bigrams.
import { describe, expect, it } from 'vitest';
import { analyze, termCounts } from '../src/retrieval/analyzer.js';

describe('retrieval analyzer', () => {
  it('lowercases, drops Lucene stopwords and possessives, Porter-stems, keeps numbers', () => {
    expect(analyze("The Patient's running kinases are IN 2 trials, with 10.5mg doses")).toEqual(['patient', 'run', 'kinas', '2', 'trial', '10', '5mg', 'dose']);
    expect(analyze('Connections connected connecting')).toEqual(['connect', 'connect', 'connect']);
    expect(analyze('relational generalization')).toEqual(['relat', 'gener']);
  });

  it('splits on anything not a letter or digit', () => {
    expect(analyze('IL-6/STAT3 signalling_pathway')).toEqual(['il', '6', 'stat3', 'signal', 'pathwai']);
    expect(analyze('')).toEqual([]);
    expect(analyze('   ...  ')).toEqual([]);
  });

  it('turns Chinese and Japanese runs into character bigrams', () => {
    expect(analyze('知识库')).toEqual(['知识', '识库']);
    expect(analyze('我的知识库 search')).toEqual(['我的', '的知', '知识', '识库', 'search']);
    expect(analyze('猫')).toEqual(['猫']);
    expect(analyze('東京タワー')).toEqual(['東京', '京タ', 'タワ', 'ワー']);
  });

  it('folds full-width forms and counts terms', () => {
    expect(analyze('ＡＢＣ１２３')).toEqual(['abc123']);
    const c = termCounts('cells and cell, the CELL');
    expect(c.length).toBe(3);
    expect(c.terms.get('cell')).toBe(3);
  });

  it('is fast enough for bulk indexing', () => {
    const text = 'Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical development. '.repeat(20);
    const started = performance.now();
    for (let i = 0; i < 200; i++) analyze(text);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
