/**
 * The sandbox of an `embed` block's frame. Third-party widgets need scripts and their own origin (storage,
 * cookies), so a frame from another origin keeps both. A frame from the page's own origin must not: with
 * `allow-scripts` and `allow-same-origin` together, same-origin content can reach into the page that frames it
 * and lift its own sandbox. Such a frame keeps scripts and runs in an opaque origin instead.
 */
const BASE = ['allow-scripts', 'allow-popups', 'allow-forms', 'allow-presentation'];

export function embedSandbox(url: string, pageOrigin: string): string {
  let origin: string | null = null;
  try {
    origin = new URL(url, pageOrigin).origin;
  } catch {
    origin = null;
  }
  const sameOrigin = origin === null || origin === 'null' || origin === pageOrigin;
  return (sameOrigin ? BASE : [BASE[0], 'allow-same-origin', ...BASE.slice(1)]).join(' ');
}
