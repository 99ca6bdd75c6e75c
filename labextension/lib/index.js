/*
 * The verdict of a student's newest Submit, in their JupyterLab: a notification with a link to the grading
 * service's full page.
 *
 * It asks the student's own server (GET <base>/attention-checks/latest, the server extension attention_checks in
 * this folder), which asks the grading service as the student: the Lab never talks to another origin, and no
 * request of it names a student. It asks every IDLE ms, every SOON ms for a while after a click on a Submit
 * button (nbgrader's Assignment List), and every WAITING ms while the newest Submit waits to be checked; never
 * while the page is hidden. Each change of the newest Submit (received, checked, queued, not checked) is told
 * once: what was told is kept in this origin's localStorage, which is the student's alone.
 *
 * Plain JavaScript with no import: JupyterLab's notifications are reached through its commands
 * (apputils:notify, apputils:update-notification), so @jupyterlab/builder is the only thing the build needs.
 */

const LATEST = 'attention-checks/latest';
const OPEN = 'attention-checks:open';
const TOLD = 'attention-checks:told';
const IDLE = 15000;
const WAITING = 2000;
const SOON = 1000;
const SOON_FOR = 120000;
const GAVE_UP = 120000; // after an error (the service restarting, the hub busy): ask again this much later

function xsrfToken() {
  const found = document.cookie.match(/(?:^|;\s*)_xsrf=([^;]+)/);
  return found ? decodeURIComponent(found[1]) : '';
}

/* What the notification says of the newest Submit, its status first, then the score and the functions that lost
   points (a toast shows 140 characters; the checks page, one click away, has the rest). */
export function describe(answer) {
  const newest = answer.newest;
  const head = `${answer.assignment}, your Submit of ${newest.received}`;
  if (newest.status !== 'done') {
    return `${head}: ${newest.words}.`;
  }
  if (newest.score === null) {
    return `${head}: checked.`;
  }
  if (newest.lost.length === 0) {
    return `${head}: checked, ${newest.score} points, every function passes.`;
  }
  const lost = newest.lost.map(item => `${item.function} ${item.points}`).join(', ');
  return `${head}: checked, ${newest.score} points. Lost points: ${lost}.`;
}

function kind(newest) {
  if (newest.waiting) {
    return newest.status === 'queued' ? 'info' : 'in-progress';
  }
  if (newest.status !== 'done') {
    return 'warning';
  }
  return newest.lost.length === 0 && newest.score !== null ? 'success' : 'info';
}

const plugin = {
  id: '@attention-course/checks:plugin',
  description: "The verdict of the student's newest Submit, as a notification linking to the checks page",
  autoStart: true,
  activate: app => {
    const base = app.serviceManager.serverSettings.baseUrl;
    let page = null;
    let soonUntil = 0;
    let timer = null;
    let shown = null; // the notification on screen for the newest Submit: {id, key}

    app.commands.addCommand(OPEN, {
      label: 'Open my checks page',
      execute: () => {
        if (page) {
          window.open(page, '_blank', 'noopener');
        }
      }
    });

    function tell(answer) {
      const newest = answer.newest;
      const key = `${newest.id}:${newest.status}`;
      if (window.localStorage.getItem(TOLD) === key) {
        return;
      }
      window.localStorage.setItem(TOLD, key);
      const label = newest.lost.length ? 'See what failed' : 'Open the checks page';
      // on screen until dismissed (the student may be busy elsewhere); one at a time: the Submit's own is updated
      // as its check goes on, a newer Submit's replaces it
      const options = { autoClose: false, actions: [{ label, commandId: OPEN, caption: page }] };
      const message = describe(answer);
      const type = kind(newest);
      if (shown && shown.submit === newest.id) {
        app.commands.execute('apputils:update-notification', { id: shown.id, message, type, ...options });
        return;
      }
      if (shown) {
        app.commands.execute('apputils:dismiss-notification', { id: shown.id });
      }
      Promise.resolve(app.commands.execute('apputils:notify', { message, type, options })).then(id => {
        shown = { id, submit: newest.id };
      });
    }

    function schedule(ms) {
      window.clearTimeout(timer);
      timer = window.setTimeout(ask, ms);
    }

    async function ask() {
      if (document.hidden) {
        schedule(SOON);
        return;
      }
      let answer;
      try {
        const response = await fetch(base + LATEST, {
          credentials: 'same-origin',
          headers: { 'X-XSRFToken': xsrfToken() }
        });
        if (response.status === 404) {
          return; // a server without the extension (an instructor's): nothing to show
        }
        if (!response.ok) {
          throw new Error(`${response.status}`);
        }
        answer = await response.json();
      } catch (error) {
        schedule(GAVE_UP);
        return;
      }
      page = answer.page;
      if (answer.newest) {
        tell(answer);
      }
      const waiting = answer.newest && answer.newest.waiting && answer.newest.status !== 'queued';
      schedule(waiting ? WAITING : Date.now() < soonUntil ? SOON : IDLE);
    }

    // a click on nbgrader's Submit button: a verdict is coming, ask often for a while
    document.addEventListener(
      'click',
      event => {
        const button = event.target instanceof Element ? event.target.closest('button') : null;
        if (button && button.textContent.includes('Submit')) {
          soonUntil = Date.now() + SOON_FOR;
          schedule(SOON);
        }
      },
      true
    );
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden) {
        schedule(0);
      }
    });
    app.restored.then(() => schedule(0));
  }
};

export default plugin;
