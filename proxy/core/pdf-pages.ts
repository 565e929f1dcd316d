/**
 * The pages of a PDF given inline, for the estimate: providers read each page as an image besides its
 * text, so a PDF of a few kilobytes can cost thousands of tokens. Pages are counted by their page
 * objects; a PDF whose objects are compressed counts as one page.
 */
export function pdfPages(base64: string): number {
  const pdf = Buffer.from(base64, 'base64').toString('latin1')
  return Math.max(1, pdf.match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0)
}

/** The pages of `url` when it is a base64 data URL of a PDF, else 0. */
export function pdfDataUrlPages(url: unknown): number {
  if (typeof url !== 'string') return 0
  const match = /^data:application\/pdf(?:;[^;,]*)*;base64,/i.exec(url)
  return match ? pdfPages(url.slice(match[0].length)) : 0
}
