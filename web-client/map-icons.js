// What the trip view and the customer's page draw the same way: the rider's arrow, the
// destination's flag, and the camera that keeps the marker in view.

export const ARROW_SVG = `<svg viewBox="0 0 40 40" aria-hidden="true" focusable="false">
  <circle cx="20" cy="20" r="17" class="rider-halo"/>
  <circle cx="20" cy="20" r="12" class="rider-disc"/>
  <path d="M20 10 27 28 20 24 13 28z" class="rider-arrowhead"/>
</svg>`;

export const FLAG_SVG = `<svg viewBox="0 0 32 40" aria-hidden="true" focusable="false">
  <path d="M16 39C16 39 4 25 4 16a12 12 0 0 1 24 0c0 9-12 23-12 23z" class="dest-pin"/>
  <path d="M12 9v15M12 9h9l-2 3 2 3h-9" class="dest-flag"/>
</svg>`;

/**
 * Pans the map to the marker when it has left the middle of the view (the inner 60 %);
 * returns whether it panned. Reduce Motion: the pan is a jump, not a glide.
 */
export function keepInView(map, lat, lon, animate) {
  const inner = map.getBounds().pad(-0.2);
  if (inner.contains([lat, lon])) return false;
  map.panTo([lat, lon], { animate, duration: 0.4 });
  return true;
}
