/** The PDF documents Cashgate writes (payment vouchers, boletos), made with pdf-lib. */
import { PDFDocument, StandardFonts, type PDFFont } from 'pdf-lib';

/**
 * A new PDF signed by Cashgate, with the standard Helvetica fonts, dated `at` (not the clock), so the
 * same facts give the same bytes.
 */
export async function newPdf(meta: {
  title: string;
  subject: string;
  at: number;
  language?: string;
}): Promise<{ doc: PDFDocument; regular: PDFFont; bold: PDFFont }> {
  const doc = await PDFDocument.create();
  const when = new Date(meta.at);
  doc.setTitle(meta.title);
  doc.setSubject(meta.subject);
  doc.setAuthor('Cashgate');
  doc.setCreator('Cashgate');
  doc.setProducer('Cashgate');
  if (meta.language !== undefined) doc.setLanguage(meta.language);
  doc.setCreationDate(when);
  doc.setModificationDate(when);
  return {
    doc,
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
  };
}
