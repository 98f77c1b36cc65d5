// Injected into a copy of a report before </body>: after load, writes a JSON
// summary of the layout into a pre element (id layout-check) for --dump-dom.
window.addEventListener("load", () => {
  const width = document.documentElement.clientWidth;
  const overflowing = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > width + 1) {
      overflowing.push(`${(el.closest("section") || {}).id} ${el.tagName} right=${Math.round(r.right)}`);
    }
  }
  const images = [...document.images];
  const glance = document.getElementById("glance");
  const pre = document.createElement("pre");
  pre.id = "layout-check";
  pre.textContent = JSON.stringify({
    viewport: width,
    scroll_width: document.documentElement.scrollWidth,
    overflowing: overflowing.slice(0, 20),
    images: images.length,
    broken: images.filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.alt),
    // the first screen: where the summary at the top ends, and the page's height
    glance_bottom: glance ? Math.round(glance.getBoundingClientRect().bottom) : null,
    page_height: document.documentElement.scrollHeight,
  });
  document.body.appendChild(pre);
});
