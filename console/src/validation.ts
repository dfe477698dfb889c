// The browser checks form fields before they are sent (required, pattern, min, max); its own text for a pattern is
// "Please match the requested format", which says nothing. Every such field says in words what it takes instead:
// its `data-format`, or a sentence built from its limits. The custom message is set when the check fails and
// cleared on the next input, so the browser checks the field afresh each time.

function messageFor(field: HTMLInputElement): string | undefined {
  const validity = field.validity;
  const label = field.labels?.[0]?.firstChild?.textContent?.trim() || field.getAttribute('aria-label') || 'This field';
  if (validity.valueMissing) return `${label} is needed.`;
  if (validity.patternMismatch) return field.dataset.format ?? `${label} is not in the form this field takes.`;
  if (validity.rangeUnderflow) return `${label} must be at least ${field.min}.`;
  if (validity.rangeOverflow) return `${label} must be at most ${field.max}.`;
  if (validity.stepMismatch || validity.badInput) return `${label} must be a whole number.`;
  if (validity.tooLong) return `${label} takes at most ${field.maxLength} characters.`;
  if (validity.tooShort) return `${label} takes at least ${field.minLength} characters.`;
  return undefined;
}

export function explainFieldErrors(root: Document): void {
  root.addEventListener(
    'invalid',
    (event) => {
      const field = event.target;
      if (!(field instanceof HTMLInputElement)) return;
      const message = messageFor(field);
      if (message) field.setCustomValidity(message);
    },
    true,
  );
  root.addEventListener(
    'input',
    (event) => {
      if (event.target instanceof HTMLInputElement) event.target.setCustomValidity('');
    },
    true,
  );
}
