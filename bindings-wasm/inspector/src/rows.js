// A window of fixed-height rows over any number of rows: only the visible rows exist as elements.
//
// Browsers cap an element's height (Chromium at 33,554,428 px, Firefox near 17.9M px): at 24 px a
// row that is about 1.4M rows. Above MAX_PX the spacer stays at MAX_PX and the scroll position
// maps proportionally onto the rows (scaled scrolling), so every row stays reachable.

export const MAX_PX = 8_000_000;

export class RowWindow {
  constructor(scroller, spacer, layer, { rowHeight, columns, render }) {
    Object.assign(this, { scroller, spacer, layer, rowHeight, columns, render, rows: 0, pool: [], frame: 0 });
    scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(scroller);
  }

  /** Scroll height in px (capped), and whether positions are scaled. */
  get height() {
    return Math.min(this.rows * this.rowHeight, MAX_PX);
  }
  get scaled() {
    return this.rows * this.rowHeight > MAX_PX;
  }

  setRows(n) {
    this.rows = n;
    this.spacer.style.height = `${this.height}px`;
    this.refresh();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.refresh();
    });
  }

  /** The first visible row (fractional) for the current scroll position. */
  firstRow() {
    const view = this.scroller.clientHeight;
    const top = this.scroller.scrollTop;
    if (!this.scaled) return top / this.rowHeight;
    const visible = view / this.rowHeight;
    const range = Math.max(1, this.height - view);
    return (Math.min(top, range) / range) * Math.max(0, this.rows - visible);
  }

  scrollTo(row) {
    const view = this.scroller.clientHeight;
    const visible = view / this.rowHeight;
    const target = Math.max(0, row - visible / 2);
    this.scroller.scrollTop = this.scaled
      ? (target / Math.max(1, this.rows - visible)) * (this.height - view)
      : target * this.rowHeight;
    this.refresh();
  }

  refresh() {
    const view = this.scroller.clientHeight || 480;
    const need = Math.ceil(view / this.rowHeight) + 2;
    while (this.pool.length < need) {
      const row = document.createElement('div');
      row.className = 'tr';
      row.setAttribute('role', 'row');
      for (let c = 0; c < this.columns; c++) row.append(document.createElement('span'));
      this.layer.append(row);
      this.pool.push(row);
    }
    const exact = this.firstRow();
    const first = Math.floor(exact);
    const top = this.scaled ? this.scroller.scrollTop - (exact - first) * this.rowHeight : first * this.rowHeight;
    this.layer.style.transform = `translateY(${top}px)`;
    for (let k = 0; k < this.pool.length; k++) {
      const row = this.pool[k];
      const pos = first + k;
      if (k < need && pos < this.rows) {
        row.hidden = false;
        row.dataset.pos = String(pos);
        this.render(row, pos);
      } else {
        row.hidden = true;
      }
    }
    this.layer.dataset.first = String(first);
  }
}
