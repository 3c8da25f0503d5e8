// An SVG watermark is parsed as XML (namespaces resolved, so `x:href` bound to the xlink namespace is
// an href like any other) and rebuilt from what can be drawn without reaching outside the document:
// no scripts, handlers, foreign content, animation, stylesheets from elsewhere, entities, processing
// instructions, or any reference that is not a fragment of the document itself.
import { DOMParser, XMLSerializer, type Element, type Node } from '@xmldom/xmldom';

export const SVG_NS = 'http://www.w3.org/2000/svg';

export class SvgSanitiseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SvgSanitiseError';
  }
}

// Element local names removed with everything inside them, whatever their namespace. Animation can
// set an href or a url() after sanitising (`<set attributeName="href" to="http://…">`); a still
// watermark has no use for it.
const DROPPED_ELEMENTS = new Set([
  'script',
  'foreignobject',
  'iframe',
  'object',
  'embed',
  'audio',
  'video',
  'canvas',
  'handler',
  'listener',
  'animate',
  'animatemotion',
  'animatetransform',
  'animatecolor',
  'set',
  'discard',
  'mpath',
]);

const NODE = { element: 1, text: 3, cdata: 4, processingInstruction: 7, comment: 8, documentType: 10 } as const;

/** True when a reference stays inside the document: `#id`, nothing else (a data: URI can carry a
 *  whole SVG of its own, with references of its own). */
const isFragment = (value: string) => /^\s*#/.test(value);

/** CSS with every url() that is not a fragment turned into `none`, and no @import. Quoted and
 *  escaped forms included: CSS escapes are undone before judging. */
export function sanitiseCss(css: string): string {
  const unescaped = css
    .replace(/\\([0-9a-f]{1,6})\s?/gi, (_m, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16) || 0xfffd))
    .replace(/\\(.)/g, '$1')
    .replace(/\/\*[\s\S]*?\*\//g, '');
  return (
    unescaped
      .replace(/@import[^;]*;?/gi, '')
      .replace(/url\(\s*("[^"]*"|'[^']*'|[^)]*)\s*\)/gi, (whole, arg: string) =>
        isFragment(arg.replace(/^["']|["']$/g, '')) ? whole : 'none',
      )
      // What is left of an unbalanced or nested url( cannot name a URL any more.
      .replace(/url\s*\((?!\s*["']?\s*#)/gi, 'none(')
      .replace(/image-set\(|-webkit-image-set\(|src\(/gi, 'none(')
  );
}

function sanitiseElement(el: Element): void {
  for (const attr of Array.from(el.attributes)) {
    const local = (attr.localName ?? attr.name).toLowerCase();
    const value = attr.value;
    const drop =
      (local === 'href' && !isFragment(value)) || // xlink:href, x:href, href, any prefix
      local.startsWith('on') || // event handlers
      (local === 'base' && attr.prefix === 'xml') || // xml:base changes what a fragment resolves against
      local === 'src';
    if (drop) {
      el.removeAttributeNode(attr);
      continue;
    }
    if (/url\s*\(|@import|image-set|\\/i.test(value)) {
      const clean = sanitiseCss(value);
      if (clean !== value) attr.value = clean;
    }
  }
}

function walk(node: Node): void {
  for (const child of Array.from(node.childNodes)) {
    switch (child.nodeType) {
      case NODE.element: {
        const el = child as Element;
        const local = (el.localName ?? el.nodeName).toLowerCase();
        // Only SVG elements draw; anything in another namespace (XHTML, a vendor's) is foreign content.
        if (DROPPED_ELEMENTS.has(local) || el.namespaceURI !== SVG_NS) {
          node.removeChild(child);
          break;
        }
        sanitiseElement(el);
        if (local === 'style') {
          const css = sanitiseCss(el.textContent ?? '');
          while (el.firstChild) el.removeChild(el.firstChild);
          el.appendChild(el.ownerDocument!.createTextNode(css));
        } else {
          walk(el);
        }
        break;
      }
      case NODE.text:
      case NODE.cdata:
        break;
      // <?xml-stylesheet href="…"?>, comments (nothing to draw), the doctype and its entities.
      default:
        node.removeChild(child);
    }
  }
}

/** The SVG rebuilt without any way to run code or reach outside itself. Throws SvgSanitiseError
 *  when the markup is not well-formed XML with an SVG root. */
export function sanitiseSvg(svg: string): string {
  let fatal: string | undefined;
  // A DOCTYPE's entities are never honoured (no XXE, no billion laughs): the parser reports a use
  // of one as an error and keeps it as plain text; what it cannot recover from refuses the image.
  const parser = new DOMParser({
    onError: (level, message) => {
      if (level === 'fatalError')
        throw new SvgSanitiseError(`the SVG is not well-formed XML (${(fatal = String(message).split('\n')[0]!.slice(0, 200))})`);
    },
  });
  let doc;
  try {
    doc = parser.parseFromString(svg, 'image/svg+xml');
  } catch (err) {
    throw new SvgSanitiseError(`the SVG is not well-formed XML (${fatal ?? (err as Error).message.split('\n')[0]!.slice(0, 200)})`);
  }
  const root = doc.documentElement;
  if (!root || root.localName !== 'svg' || root.namespaceURI !== SVG_NS) {
    throw new SvgSanitiseError('the root element is not <svg> in the SVG namespace');
  }
  for (const child of Array.from(doc.childNodes)) if (child !== root) doc.removeChild(child);
  sanitiseElement(root);
  walk(root);
  return new XMLSerializer().serializeToString(doc);
}
