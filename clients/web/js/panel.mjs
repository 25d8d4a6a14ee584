// The parameter panel: each control edits one field of the instance definition
// (core/SCHEMA.md) and is applied with a JSON merge patch; the server's validation error is
// shown next to the control it concerns.

// path: where the value lives in the definition; kind: how the control reads and writes.
export const FIELDS = [
  { name: 'solver', path: ['solver'], kind: 'select' },
  { name: 'substeps', path: ['substeps'], kind: 'int' },
  { name: 'gravity', path: ['gravity'], kind: 'vec3' },
  { name: 'verlet.damping', path: ['verlet', 'damping'], kind: 'number' },
  { name: 'verlet.iterations', path: ['verlet', 'iterations'], kind: 'int' },
  { name: 'springbone.stiffness', path: ['springbone', 'stiffness'], kind: 'number' },
  { name: 'springbone.drag_force', path: ['springbone', 'drag_force'], kind: 'number' },
  { name: 'springbone.gravity_power', path: ['springbone', 'gravity_power'], kind: 'number' },
  { name: 'wind.velocity', path: ['wind', 'velocity'], kind: 'vec3' },
  { name: 'wind.turbulence', path: ['wind', 'turbulence'], kind: 'number' },
  { name: 'colliders', path: ['strands'], kind: 'colliders' },
  { name: 'driver', path: ['driver'], kind: 'driver' },
];

const idOf = (name) => `f-${name.replace(/[^a-z0-9]+/gi, '-')}`;

function get(obj, path) {
  let o = obj;
  for (const k of path) o = o?.[k];
  return o;
}

function nest(path, value) {
  const out = {};
  let o = out;
  path.forEach((k, i) => {
    o[k] = i === path.length - 1 ? value : {};
    o = o[k];
  });
  return out;
}

// True when every strand sees every collider (SCHEMA.md: "colliders" absent = all).
function collidersOn(def) {
  const n = def?.colliders?.length ?? 0;
  return (def?.strands ?? []).every((s) => !Array.isArray(s.colliders) || s.colliders.length === n && n > 0);
}

// Which control an error's field path belongs to ("verlet.damping", "gravity",
// "strands[0].colliders"), or null.
export function fieldForError(path) {
  if (!path) return null;
  let best = null;
  for (const f of FIELDS) {
    const p = f.path.join('.');
    if (path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`)) {
      if (!best || p.length > best.path.join('.').length) best = f;
    }
  }
  return best;
}

export class Panel {
  // root: the panel element; apply(patch) -> Promise<instance json> (throws ApiError).
  constructor(root, apply) {
    this.root = root;
    this.apply = apply;
    this.def = null;
    this.busy = new Set();
    this.invalid = new Set(); // controls showing an error keep what the user typed
    this.general = root.querySelector('[data-error-for="_"]');
    for (const f of FIELDS) {
      const inputs = this.inputs(f);
      for (const el of inputs) el.addEventListener('change', () => this.commit(f));
    }
    this.setEnabled(false);
  }

  inputs(f) {
    const id = idOf(f.name);
    if (f.kind === 'vec3') return ['x', 'y', 'z'].map((a) => this.root.querySelector(`#${id}-${a}`)).filter(Boolean);
    const el = this.root.querySelector(`#${id}`);
    return el ? [el] : [];
  }

  errorSlot(f) {
    return this.root.querySelector(`#${idOf(f.name)}-error`);
  }

  setEnabled(on) {
    for (const el of this.root.querySelectorAll('input, select')) el.disabled = !on;
    if (on && this.def) this.inputs(FIELDS.find((f) => f.kind === 'colliders'))[0].disabled = !(this.def.colliders?.length > 0);
  }

  // Shows an instance (the JSON of GET /v1/instances/{id}); fields being edited are kept.
  load(instance) {
    const def = instance?.definition;
    if (!def) return;
    this.def = def;
    for (const f of FIELDS) {
      const inputs = this.inputs(f);
      if (inputs.some((el) => el === document.activeElement) || this.busy.has(f.name) || this.invalid.has(f.name)) continue;
      const v = get(def, f.path);
      if (f.kind === 'vec3') inputs.forEach((el, i) => { el.value = fmt(v?.[i] ?? 0); });
      else if (f.kind === 'colliders') inputs[0].checked = collidersOn(def);
      else if (f.kind === 'driver') inputs[0].value = v?.motion ?? 'none';
      else if (f.kind === 'select') inputs[0].value = v ?? '';
      else inputs[0].value = fmt(v ?? 0);
    }
    this.root.dataset.solver = def.solver;
    this.setEnabled(true);
  }

  // The merge patch for control f, or throws a message for the field.
  patchFor(f) {
    const inputs = this.inputs(f);
    const num = (el, int) => {
      if (el.value.trim() === '' || !Number.isFinite(Number(el.value))) throw new Error('enter a number');
      const n = Number(el.value);
      return int && Number.isInteger(n) ? Math.trunc(n) : n;
    };
    switch (f.kind) {
      case 'select':
        return nest(f.path, inputs[0].value);
      case 'int':
        return nest(f.path, num(inputs[0], true));
      case 'number':
        return nest(f.path, num(inputs[0], false));
      case 'vec3':
        return nest(f.path, inputs.map((el) => num(el, false)));
      case 'driver': {
        const m = inputs[0].value;
        return { driver: m === 'none' ? null : { motion: m } };
      }
      case 'colliders': {
        const on = inputs[0].checked;
        const strands = (this.def?.strands ?? []).map((s) => {
          const c = { ...s };
          if (on) delete c.colliders;
          else c.colliders = [];
          return c;
        });
        return { strands };
      }
      default:
        throw new Error(`unknown control ${f.name}`);
    }
  }

  showError(f, message) {
    const slot = f ? this.errorSlot(f) : this.general;
    if (slot) slot.textContent = message;
    if (!f) return;
    if (message) this.invalid.add(f.name);
    else this.invalid.delete(f.name);
    for (const el of this.inputs(f)) el.setAttribute('aria-invalid', message ? 'true' : 'false');
  }

  clearErrors() {
    for (const f of FIELDS) this.showError(f, '');
    if (this.general) this.general.textContent = '';
  }

  async commit(f) {
    let patch;
    try {
      patch = this.patchFor(f);
    } catch (e) {
      this.showError(f, e.message);
      return;
    }
    this.busy.add(f.name);
    this.root.setAttribute('aria-busy', 'true');
    try {
      const inst = await this.apply(patch);
      this.busy.delete(f.name);
      this.showError(f, '');
      if (this.general) this.general.textContent = '';
      this.load(inst);
      this.flash(f);
    } catch (e) {
      this.busy.delete(f.name);
      // The error belongs to the field it names; the patch held only this control's
      // field, so an unnamed (or foreign) field is still about this control.
      const target = fieldForError(e.field) ?? f;
      this.showError(target, e.message || String(e));
    } finally {
      if (!this.busy.size) this.root.removeAttribute('aria-busy');
    }
  }

  flash(f) {
    const row = this.inputs(f)[0]?.closest('.row');
    if (!row) return;
    row.classList.remove('saved');
    void row.offsetWidth;
    row.classList.add('saved');
  }
}

function fmt(v) {
  if (typeof v !== 'number') return String(v);
  return String(Math.round(v * 1e6) / 1e6);
}
