/*
 * The course in a person's JupyterLab on the hub: three plugins, wired to the page here; what they decide is in
 * logic.js (plain functions, tested with node alone).
 *
 * verdict (students only: the instructor's page configuration leaves it out): the verdict of the student's newest
 * Submit, a notification with a link to the grading service's full page. It asks the student's own server
 * (GET <base>/attention-checks/latest, the server extension attention_checks in this folder), which asks the grading
 * service as the student: the Lab never talks to another origin, and no request of it names a student. It asks
 * every IDLE ms, every SOON ms for a while after a click on a Submit button (nbgrader's Assignment List), and every
 * WAITING ms while the newest Submit waits to be checked; never while the page is hidden. Each change of the newest
 * Submit (received, checked, queued, not checked) is told once: what was told is kept in this origin's
 * localStorage, which is the student's alone.
 *
 * feedback: nbgrader's "(view feedback)" link in the Assignment List moves the file browser to the feedback's
 * folder (nbgrader's own click: filebrowser:go-to-path with the folder nbgrader lists for that Submit); this plugin
 * sees that command run right after a click on the link and opens the folder's feedback page in a new browser tab,
 * served by the person's own server from their own home (its /files/: the server answers its owner only), or in
 * a JupyterLab tab when the browser blocks the new tab.
 *
 * validate: nbgrader's Validation Results dialog shows, for each failed cell, its whole code and then Python's
 * traceback, whose last line is the sentence that explains the mistake. This plugin rearranges the dialog once it
 * is shown: the sentences first, each with its cell and traceback folded below it.
 *
 * Plain JavaScript with no import but logic.js: JupyterLab is reached through its commands (apputils:notify,
 * filebrowser:go-to-path, docmanager:open) and the page, so @jupyterlab/builder is the only thing the build needs.
 */

import {
  describe,
  feedbackPages,
  filesUrl,
  isFeedbackLink,
  isSubmitButton,
  kind,
  nextDelay,
  SOON,
  SOON_FOR,
  toldKey,
  validationLead,
  validationSentence
} from './logic.js';

const LATEST = 'attention-checks/latest';
const OPEN = 'attention-checks:open';
const TOLD = 'attention-checks:told';

function xsrfToken() {
  const found = document.cookie.match(/(?:^|;\s*)_xsrf=([^;]+)/);
  return found ? decodeURIComponent(found[1]) : '';
}

const verdict = {
  id: '@attention-course/checks:verdict',
  description: "The verdict of the student's newest Submit, as a notification linking to the checks page",
  autoStart: true,
  activate: app => {
    const base = app.serviceManager.serverSettings.baseUrl;
    let page = null;
    let soonUntil = 0;
    let timer = null;
    let shown = null; // the notification on screen for the newest Submit: {id, submit}

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
      const key = toldKey(newest);
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
          return; // a server without the extension: nothing to show
        }
        if (!response.ok) {
          throw new Error(`${response.status}`);
        }
        answer = await response.json();
      } catch (error) {
        schedule(nextDelay(null, Date.now(), soonUntil));
        return;
      }
      page = answer.page;
      if (answer.newest) {
        tell(answer);
      }
      schedule(nextDelay(answer, Date.now(), soonUntil));
    }

    // a click on nbgrader's Submit button: a verdict is coming, ask often for a while
    document.addEventListener(
      'click',
      event => {
        const button = event.target instanceof Element ? event.target.closest('button') : null;
        if (button && isSubmitButton(button.textContent)) {
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

const feedback = {
  id: '@attention-course/checks:feedback',
  description: 'One click on "(view feedback)" in the Assignment List opens the feedback page',
  autoStart: true,
  activate: app => {
    const base = app.serviceManager.serverSettings.baseUrl;
    let clicked = 0; // when a "(view feedback)" link was last clicked

    async function open(folder) {
      const listing = await app.serviceManager.contents.get(folder, { content: true });
      const pages = feedbackPages(listing);
      for (const path of pages) {
        const tab = window.open(filesUrl(base, path), '_blank');
        if (tab) {
          try {
            tab.opener = null; // the page is the person's own, but it needs nothing of this one
          } catch (error) {
            // already another origin's (the page is served sandboxed): it cannot reach this one anyway
          }
        } else {
          app.commands.execute('docmanager:open', { path, factory: 'HTML Viewer' }); // the new tab was blocked
        }
      }
    }

    document.addEventListener(
      'click',
      event => {
        const link = event.target instanceof Element ? event.target.closest('a') : null;
        if (link && isFeedbackLink(link.textContent)) {
          clicked = Date.now();
        }
      },
      true
    );
    // nbgrader's own click handler runs filebrowser:go-to-path with the Submit's feedback folder, within the same
    // click (the command registry tells of a command as it starts it)
    app.commands.commandExecuted.connect((_, executed) => {
      if (executed.id !== 'filebrowser:go-to-path' || Date.now() - clicked > 1000) {
        return;
      }
      clicked = 0;
      open(String(executed.args.path)).catch(error => console.warn('the feedback page did not open:', error));
    });
  }
};

const validate = {
  id: '@attention-course/checks:validate',
  description: "nbgrader's Validation Results lead with the sentence that explains each failed cell",
  autoStart: true,
  activate: () => {
    // nbgrader's body: #validation-message.validation-failed holding, for each failed cell, a <div><p>The following
    // cell failed:</p></div>, the cell's code (div.jp-RenderedText) and its traceback (div.jp-RenderedText)
    function rearrange(body) {
      const children = Array.from(body.children);
      const failures = [];
      for (let i = 0; i + 2 < children.length; i += 3) {
        failures.push({ code: children[i + 1], traceback: children[i + 2] });
      }
      if (failures.length === 0 || failures.length * 3 !== children.length) {
        return; // not the layout this plugin knows (another nbgrader): left as nbgrader shows it
      }
      body.replaceChildren();
      const lead = document.createElement('p');
      lead.className = 'attention-validate-lead';
      lead.textContent = validationLead(failures.length);
      body.append(lead);
      for (const failure of failures) {
        const why = document.createElement('p');
        why.className = 'attention-validate-why';
        why.style.fontWeight = 'bold';
        why.style.whiteSpace = 'pre-wrap';
        why.textContent = validationSentence(failure.traceback.textContent);
        const folded = document.createElement('details');
        const summary = document.createElement('summary');
        summary.textContent = 'the cell and its traceback';
        folded.append(summary, failure.code, failure.traceback);
        for (const box of folded.querySelectorAll('pre')) {
          box.style.whiteSpace = 'pre-wrap'; // long lines wrap instead of running past the dialog
          box.style.overflowWrap = 'anywhere';
        }
        body.append(why, folded);
      }
      body.classList.add('attention-validate-rearranged');
    }

    new MutationObserver(() => {
      for (const body of document.querySelectorAll('#validation-message.validation-failed')) {
        if (!body.classList.contains('attention-validate-rearranged')) {
          rearrange(body);
        }
      }
    }).observe(document.body, { childList: true }); // a dialog is attached to the body whole, its message in it
  }
};

export default [verdict, feedback, validate];
