/*
 * What the Lab extension decides, apart from the page: plain functions of plain values, with no DOM, no JupyterLab
 * and no network, so that node alone tests them (tests/labextension/logic.test.mjs). index.js wires them to the
 * page.
 *
 *   the verdict:   describe (ownDue), kind, toldKey, nextDelay, isSubmitButton
 *   Validate:      validationSentence, validationLead
 *   feedback:      isFeedbackLink, feedbackPages, filesUrl
 */

export const IDLE = 15000; // ms between two questions when nothing is expected
export const WAITING = 2000; // while the newest Submit waits for a checker
export const SOON = 1000; // for a while after a click on Submit
export const SOON_FOR = 120000;
export const GAVE_UP = 120000; // after an error (the service restarting, the hub busy): ask again this much later
export const TOAST = 140; // characters a JupyterLab notification shows (it cuts the rest)

/* What the notification says of the newest Submit, its status first, then the score, the functions that lost
   points and how the hidden checks were cut short, if they were, then the student's own due date and late days
   when the course has them. A toast shows TOAST characters (JupyterLab cuts the rest), and the checks page, one
   click away, has everything; so a message too long says less, in this order, until it fits: without how the
   checks were cut short, naming fewer functions ("and 2 more", never fewer than one), the due date without its year, without
   the late days, and last the verdict alone (cut by JupyterLab). A queued Submit says when it is checked: the
   service's words carry the time ("queued: checked when your window reopens, at 14:05 UTC"). */
export function describe(answer) {
  if (!ownDue(answer)) {
    return verdict(answer);
  }
  const lost = (answer.newest.lost || []).length;
  const tries = [[lost, true, ownDue(answer)]];
  for (let named = lost; named >= 1; named -= 1) {
    tries.push([named, false, ownDue(answer)]);
  }
  const one = Math.min(lost, 1);
  tries.push([one, false, ownDue(answer, { year: false })]);
  tries.push([one, false, ownDue({ ...answer, late_days_left: null }, { year: false })]);
  for (const [named, ends, due] of tries) {
    const said = verdict(answer, named, ends) + due;
    if (said.length <= TOAST) {
      return said;
    }
  }
  return verdict(answer, lost, true);
}

function verdict(answer, named = Infinity, withEnds = true) {
  const newest = answer.newest;
  const head = `${newest.assignment || answer.assignment}, your Submit of ${newest.received}`;
  if (newest.status !== 'done') {
    return `${head}: ${newest.words}.`;
  }
  if (newest.score === null) {
    return `${head}: checked.`;
  }
  if (newest.lost.length === 0) {
    return `${head}: checked, ${newest.score} points, every function passes.`;
  }
  const shown = newest.lost.slice(0, named).map(item => `${item.function} ${item.points}`);
  const more = newest.lost.length - shown.length;
  const lost = shown.join(', ') + (more > 0 ? ` and ${more} more` : '');
  const ends = (withEnds && newest.ends) || []; // how the hidden checks were cut short (a service before ends: none)
  const cut = ends.length > 0 ? ` Cut short: ${ends[0]}.` : '';
  return `${head}: checked, ${newest.score} points. Lost points: ${lost}.${cut}`;
}

/* The student's own due date (an extension, late days spent) and late days left, when the course has them
   (api/latest's due, ISO in UTC, and late_days_left; a service without the course's term sends neither). */
export function ownDue(answer, { year = true } = {}) {
  if (!answer.due) {
    return '';
  }
  const when = answer.due.replace('T', ' ').slice(year ? 0 : 5, 16);
  const left = answer.late_days_left;
  const days = typeof left === 'number' ? `, ${left} late day${left === 1 ? '' : 's'} left` : '';
  return ` Due ${when} UTC${days}.`;
}

/* The notification's type: in progress while a checker has it, info while queued, a warning when it was not
   checked, success when every function passes. */
export function kind(newest) {
  if (newest.waiting) {
    return newest.status === 'queued' ? 'info' : 'in-progress';
  }
  if (newest.status !== 'done') {
    return 'warning';
  }
  return newest.lost.length === 0 && newest.score !== null ? 'success' : 'info';
}

/* What is remembered of a notification told: each change of the newest Submit is told once. */
export function toldKey(newest) {
  return `${newest.id}:${newest.status}`;
}

/* When to ask again (ms), from the answer just read (null after an error) and the clock: often while a checker
   has the newest Submit (a queued one waits for its window: no hurry), often for a while after a click on Submit,
   rarely otherwise. */
export function nextDelay(answer, now, soonUntil) {
  if (answer === null) {
    return GAVE_UP;
  }
  const newest = answer.newest;
  if (newest && newest.waiting && newest.status !== 'queued') {
    return WAITING;
  }
  return now < soonUntil ? SOON : IDLE;
}

/* Whether a clicked button is nbgrader's Submit (its label: "Submit", or "Submitting..." while it works). */
export function isSubmitButton(label) {
  return /^\s*Submit/.test(label || '');
}

// a line that names an exception, as Python's traceback ends: "AssertionError: row 0 sums to 0.161: ..."
const RAISED = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))(?::\s?(.*))?$/;

/* The sentence that explains a failed cell, from the text of nbgrader's error box (Python's traceback, or
   nbgrader's own words such as "You did not provide a response."): the message of the last exception raised, or,
   when no exception is named, the last line. */
export function validationSentence(errorText) {
  const lines = (errorText || '').split('\n').map(line => line.replace(/\s+$/, ''));
  for (let i = lines.length - 1; i >= 0; i--) {
    const found = RAISED.exec(lines[i]);
    if (found) {
      const rest = [found[2] || '', ...lines.slice(i + 1)].join('\n').trim();
      return rest || found[1]; // an exception without a message: its name is all there is
    }
  }
  const said = lines.filter(line => line.trim() !== '');
  return said.length ? said[said.length - 1].trim() : 'This cell failed without saying why: run it to see.';
}

/* The dialog's first line, above the sentences: how many cells fail. */
export function validationLead(failures) {
  if (failures === 1) {
    return 'One cell does not pass yet. What to fix:';
  }
  return `${failures} cells do not pass yet. What to fix, in the notebook's order:`;
}

/* Whether a link is nbgrader's "(view feedback)" in the Assignment List. */
export function isFeedbackLink(text) {
  return /^\s*\(view feedback\)\s*$/.test(text || '');
}

/* The feedback pages of a feedback folder, from its listing (the contents API's: {content: [{type, name, path}]}):
   its HTML files, by name (one per notebook of the assignment). */
export function feedbackPages(listing) {
  const content = (listing && listing.content) || [];
  return content
    .filter(item => item.type === 'file' && /\.html?$/i.test(item.name))
    .map(item => item.path)
    .sort();
}

/* The address the server serves a file of its own at (base ends with "/"): each part of the path encoded. */
export function filesUrl(base, path) {
  const parts = path.split('/').filter(part => part !== '');
  return `${base}files/${parts.map(encodeURIComponent).join('/')}`;
}
