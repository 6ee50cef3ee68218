/** Helpers for webview HTML: escaping, and the page shell with a strict content security policy. */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] ?? ch);
}

export function nonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (let k = 0; k < 32; k++) {
    out += chars.charAt(Math.floor(Math.random() * chars.length));
  }
  return out;
}

export interface PageParts {
  title: string;
  cspSource: string;
  scriptUri: string;
  styles: string;
  body: string;
}

/** A page whose only script is the bundled one, loaded with a nonce; no inline handlers. */
export function page(parts: PageParts): string {
  const n = nonce();
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${parts.cspSource} data:; style-src ${parts.cspSource} 'unsafe-inline'; script-src 'nonce-${n}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(parts.title)}</title>
<style>${parts.styles}</style>
</head><body>${parts.body}
<script nonce="${n}" src="${parts.scriptUri}"></script>
</body></html>`;
}
