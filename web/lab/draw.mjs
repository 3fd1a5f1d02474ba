// Small helpers the lab's pages draw with: SVG elements built with createElementNS and text set
// with textContent only (ids and numbers from the server never become markup).
const SVG = 'http://www.w3.org/2000/svg';

export function svg(tag, attributes = {}, title = null) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (title !== null) {
    const t = document.createElementNS(SVG, 'title');
    t.textContent = title;
    element.append(t);
  }
  return element;
}

export function html(tag, text = '', className = '') {
  const element = document.createElement(tag);
  if (text) element.textContent = text;
  if (className) element.className = className;
  return element;
}

// A stable colour for a sequence id.
export function colourOf(id) {
  let hash = 2166136261;
  for (let i = 0; i < id.length; ++i) hash = Math.imul(hash ^ id.charCodeAt(i), 16777619);
  return `hsl(${(hash >>> 0) % 360} 62% 55%)`;
}

export function ms(value) {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}
