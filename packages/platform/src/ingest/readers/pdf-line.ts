// A line of a PDF page, apart from pdf.ts so that pdf-running-lines.ts, which
// pdf.ts calls, can name it without importing pdf.ts back.

/** A line of a page: its text and where it stands (PDF points, y up). */
export interface PdfLine {
  text: string;
  x: number;
  endX: number;
  y: number;
  height: number;
  /** Every character of the line is set in a monospaced font (code, in a document whose text is not). */
  mono?: boolean;
  /** The line's parts that stand far apart (a table row's cells), when there are two or more (pdf-tables.ts). */
  cells?: { text: string; x: number; endX: number }[];
}
