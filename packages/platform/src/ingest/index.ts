// Document ingestion: uploaded files and links -> markdown-ish text -> chunks.
// Everything refused is an IngestError with a stable `code` and an HTTP `status`.

export { IngestError, isIngestError, type IngestErrorCode } from './errors.js';
export {
  readDocument,
  readDocumentText,
  detectFormat,
  blankPages,
  NeedsOcr,
  type DocumentText,
  type DocumentFormat,
  type ReadDocumentInput,
  type ReadDocumentOptions,
  type ReadDocumentResult,
} from './readers/index.js';
export { htmlToMarkdown, type HtmlToMarkdownResult } from './readers/html.js';
export { parseCsv, csvRowsToText, csvToText, type CsvOptions } from './readers/csv.js';
export { decodeText } from './readers/text.js';
export { fetchLink, type FetchLinkOptions, type FetchLinkResult, type HostResolver } from './link.js';
export { forbiddenAddressReason } from './link-address.js';
export { crawlSite, pageLinks, sitemapEntries, CRAWLER_AGENT, type CrawlOptions, type CrawlStep } from './site-crawl.js';
export { chunkMarkdown, chunkMarkdownLoaded, SectionChunker, MIN_CHUNK_SIZE, type Chunk, type ChunkOptions } from './chunker.js';
export { textSections, SECTION_CHARS, type TextSection } from './sections.js';
export { CustomFileReader, type CustomReaderConfig } from './custom-reader.js';
export { chunkBatches, chunksUpTo, countChunks, IN_THREAD_MAX_BYTES, type ChunkInput, type ChunkingSettings } from './chunk-stream.js';
export { ocrPages, DEFAULT_OCR_LANGUAGES, type OcrEvent, type OcrPage } from './ocr/index.js';
export { countTokens as countChunkTokens } from './text-split.js';
export { DEFAULT_QA_PROMPT, buildQaPrompt, parseQaPairs, type QaPair } from './qa.js';
