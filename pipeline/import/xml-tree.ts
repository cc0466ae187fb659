/**
 * A small element tree built with saxes (a strict, non-validating XML parser that expands no
 * external entities): element local names, namespace URIs, attributes, text and the line where
 * each element starts. Every value stays text — nothing is turned into a number (FIELD-NOTES:
 * parsers that do so turn `18.150` into 18.15 and `00042` into 42).
 */
import { SaxesParser } from 'saxes';

/** One XML element: local name, namespace URI, attributes, text content and children. */
export interface XmlElement {
  readonly name: string;
  readonly uri: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  /** The element's own character data (text and CDATA directly inside it), as written. */
  text: string;
  /** 1-based line of the start tag. */
  readonly line: number;
}

/** Parses an XML document; throws Error with line and column when it is not well-formed. */
export function parseXml(text: string, fileName: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true, position: true, fileName });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let failure: Error | undefined;
  parser.on('error', (e) => { failure ??= e; });
  parser.on('opentag', (tag) => {
    const attributes: Record<string, string> = {};
    for (const a of Object.values(tag.attributes)) if (a.prefix !== 'xmlns' && a.name !== 'xmlns') attributes[a.local] = a.value;
    const el: XmlElement = { name: tag.local, uri: tag.uri, attributes, children: [], text: '', line: parser.line };
    if (stack.length) stack[stack.length - 1].children.push(el);
    else root = el;
    stack.push(el);
  });
  parser.on('text', (t) => { if (stack.length) stack[stack.length - 1].text += t; });
  parser.on('cdata', (t) => { if (stack.length) stack[stack.length - 1].text += t; });
  parser.on('closetag', () => { stack.pop(); });
  parser.write(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).close();
  if (failure) throw failure;
  if (!root) throw new Error(`${fileName}: no root element`);
  return root;
}

/** The first child named `name`, or undefined. */
export function child(el: XmlElement | undefined, name: string): XmlElement | undefined {
  return el?.children.find((c) => c.name === name);
}

/** Every child named `name`. */
export function children(el: XmlElement | undefined, name: string): XmlElement[] {
  return el ? el.children.filter((c) => c.name === name) : [];
}

/** Follows a path of child names (`['Acct', 'Id', 'IBAN']`); undefined when any step is missing. */
export function at(el: XmlElement | undefined, ...path: string[]): XmlElement | undefined {
  let cur = el;
  for (const p of path) cur = child(cur, p);
  return cur;
}

/**
 * The collapsed text of the element at `path` (XML Schema `whiteSpace=collapse`, which ISO 20022
 * simple types such as identifiers, codes, dates and decimals use), or undefined when absent.
 */
export function textAt(el: XmlElement | undefined, ...path: string[]): string | undefined {
  const e = at(el, ...path);
  return e === undefined ? undefined : e.text.replace(/[\t\n\r ]+/g, ' ').trim();
}

/** The element's text exactly as written (white space preserved), or undefined when absent. */
export function rawTextAt(el: XmlElement | undefined, ...path: string[]): string | undefined {
  return at(el, ...path)?.text;
}
