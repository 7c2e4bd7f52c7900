/**
 * Redaction of URLs in health reasons and error messages: events and logs
 * carry `scheme://host:port/path`, never userinfo (`user:password@`), query
 * strings (tokens) or fragments.
 * @internal
 */

/** `url` as `scheme://host[:port]/path`: no userinfo, query or fragment. @internal */
export function redactUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

// A scheme, `://`, then everything up to whitespace or a quote/bracket that ends a URL in prose.
const URL_IN_TEXT = /[a-z][a-z\d+.-]*:\/\/[^\s"'<>`]+/gi;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}]+$/;

/**
 * `text` with every `scheme://…` in it redacted by {@link redactUrl}; one that
 * does not parse keeps only its scheme. Text without `://` is returned as is.
 * @internal
 */
export function redactUrls(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (match) => {
    // Punctuation that ends a sentence or a parenthesis is prose, not URL.
    const tail = TRAILING_PUNCTUATION.exec(match)?.[0] ?? '';
    const found = match.slice(0, match.length - tail.length);
    try {
      return redactUrl(new URL(found)) + tail;
    } catch {
      return `${found.slice(0, found.indexOf('://'))}://[redacted]${tail}`;
    }
  });
}
