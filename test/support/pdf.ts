import { PDFParse } from 'pdf-parse';

/** The text of a PDF, as pdf-parse extracts it (an independent reader, not the renderer's library). */
export async function pdfText(bytes: Uint8Array): Promise<string> {
  const parser = new PDFParse({ data: bytes });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}
