// labextension/lib/logic.js with node alone (`node --test`; tests/labextension/test_logic_js.py runs it in the
// suite): what the Lab extension says after Submit and when it asks again, the sentence Validate's dialog leads
// with, and the feedback page one click opens.
import assert from 'node:assert/strict';
import test from 'node:test';

import {
  describe,
  ownDue,
  feedbackPages,
  filesUrl,
  GAVE_UP,
  IDLE,
  isFeedbackLink,
  isSubmitButton,
  kind,
  nextDelay,
  SOON,
  TOAST,
  toldKey,
  validationLead,
  validationSentence,
  WAITING
} from '../../labextension/lib/logic.js';

// api/latest's answer (autograder.service.app.latest_values), with the newest Submit changed by `newest`
function answer(newest) {
  const base = { id: 7, received: '14:02:11 UTC', status: 'done', words: 'checked', waiting: false };
  return { student: 'student1', assignment: 'attention', newest: { ...base, score: 29, lost: [], ...newest } };
}

test('a checked Submit names its score, then each function that lost points with its points', () => {
  const lost = [
    { function: 'attention', points: '4.4 of 8' },
    { function: 'softmax', points: '1 of 2' }
  ];
  const said = describe(answer({ score: 24.4, lost }));
  assert.equal(
    said,
    'attention, your Submit of 14:02:11 UTC: checked, 24.4 points. Lost points: attention 4.4 of 8, softmax 1 of 2.'
  );
  assert.equal(kind(answer({ score: 24.4, lost }).newest), 'info');
});

test('a Submit whose hidden checks were cut short says how, after what lost points', () => {
  const lost = [{ function: 'attention', points: '4 of 8' }];
  const ends = ['stopped: attention waited 2 s without computing (sleep, input or a lock?)'];
  assert.equal(
    describe(answer({ score: 21, lost, ends })),
    'attention, your Submit of 14:02:11 UTC: checked, 21 points. Lost points: attention 4 of 8. ' +
      'Cut short: stopped: attention waited 2 s without computing (sleep, input or a lock?).'
  );
});

test('a Submit where every function passes says so, as a success', () => {
  const newest = answer({}).newest;
  assert.equal(describe(answer({})), 'attention, your Submit of 14:02:11 UTC: checked, 29 points, every function passes.');
  assert.equal(kind(newest), 'success');
});

test('a score the policy hides is not guessed: checked, nothing more', () => {
  const hidden = answer({ score: null });
  assert.equal(describe(hidden), 'attention, your Submit of 14:02:11 UTC: checked.');
  assert.equal(kind(hidden.newest), 'info'); // never a success the student cannot see
});

test("a queued Submit says when it is checked, in the service's words", () => {
  const words = 'queued: checked when your window reopens, at 15:00 UTC';
  const queued = answer({ status: 'queued', words, waiting: true, score: null });
  assert.equal(describe(queued), `attention, your Submit of 14:02:11 UTC: ${words}.`);
  assert.equal(kind(queued.newest), 'info');
  const checking = answer({ status: 'checking', words: 'being checked', waiting: true, score: null });
  assert.equal(kind(checking.newest), 'in-progress');
  const refused = answer({ status: 'refused', words: 'could not be checked: no notebook', score: null });
  assert.equal(describe(refused), 'attention, your Submit of 14:02:11 UTC: could not be checked: no notebook.');
  assert.equal(kind(refused.newest), 'warning');
});

test("the Submit's own assignment is named when the service names it (a course of several assignments)", () => {
  assert.match(describe(answer({ assignment: 'transformer' })), /^transformer, your Submit/);
});

test('each change of the newest Submit is told once: its key changes with its status and with a newer Submit', () => {
  const keys = [
    answer({ status: 'pending', waiting: true }),
    answer({ status: 'checking', waiting: true }),
    answer({}),
    answer({ id: 8 })
  ].map(a => toldKey(a.newest));
  assert.equal(new Set(keys).size, 4);
  assert.equal(toldKey(answer({}).newest), toldKey(answer({ score: 3 }).newest)); // the same state: told already
});

test('it asks often while a checker has the Submit, soon after a click on Submit, rarely otherwise', () => {
  const now = 1_000_000;
  assert.equal(nextDelay(answer({ status: 'checking', waiting: true }), now, 0), WAITING);
  assert.equal(nextDelay(answer({ status: 'queued', waiting: true }), now, 0), IDLE); // waits for its window
  assert.equal(nextDelay(answer({}), now, now + 5000), SOON);
  assert.equal(nextDelay(answer({}), now, now - 1), IDLE);
  assert.equal(nextDelay({ newest: null }, now, 0), IDLE); // no Submit yet
  assert.equal(nextDelay(null, now, now + 5000), GAVE_UP); // an error: the service may be restarting
  assert.ok(WAITING < IDLE && SOON < IDLE && IDLE < GAVE_UP);
});

test("nbgrader's Submit button is known by its label, other buttons are not", () => {
  assert.ok(isSubmitButton('Submit'));
  assert.ok(isSubmitButton(' Submitting...'));
  assert.ok(!isSubmitButton('Fetch Feedback'));
  assert.ok(!isSubmitButton('Validate'));
  assert.ok(!isSubmitButton(null));
});

// the text of nbgrader's error box for a failed check cell: IPython's traceback, the code around each frame, then
// the exception's line
const TRACEBACK = [
  '---------------------------------------------------------------------------',
  'AssertionError                            Traceback (most recent call last)',
  'Cell In[14], line 52',
  '     50     return "ok"',
  '---> 52 _check_masked_attention()',
  '',
  'Cell In[14], line 48, in _check_masked_attention()',
  '     47 for i, total in enumerate(weights.sum(axis=-1)):',
  '---> 48     assert abs(total - 1) < tolerance, (',
  '     49         f"row {i} sums to {total:.3f}: apply the mask ..."',
  '',
  'AssertionError: row 0 sums to 0.161: apply the mask to the scores before softmax, not to the weights after it'
].join('\n');

test("Validate's sentence is the message of the exception the check raised, without its name", () => {
  assert.equal(
    validationSentence(TRACEBACK),
    'row 0 sums to 0.161: apply the mask to the scores before softmax, not to the weights after it'
  );
  const unwritten = TRACEBACK.replace(/AssertionError: .*$/, 'NotImplementedError: softmax is not written yet: write it in section 1');
  assert.equal(validationSentence(unwritten), 'softmax is not written yet: write it in section 1');
});

test('a message of several lines is kept whole, and an exception with no message is named', () => {
  const long = `${TRACEBACK}\nsecond line of the message\n`;
  assert.equal(
    validationSentence(long),
    'row 0 sums to 0.161: apply the mask to the scores before softmax, not to the weights after it\n' +
      'second line of the message'
  );
  assert.equal(validationSentence(`${TRACEBACK.split('\n').slice(0, -1).join('\n')}\nAssertionError`), 'AssertionError');
  const dotted = 'Traceback\nnumpy.linalg.LinAlgError: Singular matrix';
  assert.equal(validationSentence(dotted), 'Singular matrix');
});

test("nbgrader's own words (an unanswered written question, partial credit) are the sentence as they are", () => {
  assert.equal(validationSentence('You did not provide a response.'), 'You did not provide a response.');
  assert.equal(
    validationSentence('Partial credit; passed some but not all of the tests\n'),
    'Partial credit; passed some but not all of the tests'
  );
  assert.match(validationSentence(''), /without saying why/);
  // what a cell printed to stderr before its exception does not hide the exception's message
  assert.equal(validationSentence(`UserWarning-like text printed\n${TRACEBACK}`), validationSentence(TRACEBACK));
});

test("the dialog's first line counts the failed cells", () => {
  assert.match(validationLead(1), /^One cell does not pass yet/);
  assert.match(validationLead(3), /^3 cells do not pass yet/);
});

test('the "(view feedback)" link is told apart from the other words of the list', () => {
  assert.ok(isFeedbackLink(' (view feedback)'));
  assert.ok(!isFeedbackLink(' (feedback available to fetch)'));
  assert.ok(!isFeedbackLink('view feedback of someone'));
});

test("a feedback folder's pages are its HTML files, by name", () => {
  const folder = 'attention/feedback/2026-12-01 13:00:00.000000 UTC';
  const listing = {
    content: [
      { type: 'file', name: 'part2.html', path: `${folder}/part2.html` },
      { type: 'file', name: 'attention.html', path: `${folder}/attention.html` },
      { type: 'file', name: 'timestamp.txt', path: `${folder}/timestamp.txt` },
      { type: 'directory', name: 'images.html', path: `${folder}/images.html` }
    ]
  };
  assert.deepEqual(feedbackPages(listing), [`${folder}/attention.html`, `${folder}/part2.html`]);
  assert.deepEqual(feedbackPages({ content: [] }), []);
  assert.deepEqual(feedbackPages(null), []);
});

test("a file's address on the person's own server encodes each part of its path (nbgrader's folders have spaces)", () => {
  const url = filesUrl('/user/student1/', 'attention/feedback/2026-12-01 13:00:00.000000 UTC/attention.html');
  assert.equal(url, '/user/student1/files/attention/feedback/2026-12-01%2013%3A00%3A00.000000%20UTC/attention.html');
  assert.equal(filesUrl('/', '/a#b/c?.html'), '/files/a%23b/c%3F.html');
});

test("the student's own due date and late days follow the verdict when the course has them", () => {
  const own = { ...answer({}), due: '2026-12-16T05:00:00Z', late_days_left: 1 };
  assert.equal(
    describe(own),
    'attention, your Submit of 14:02:11 UTC: checked, 29 points, every function passes. Due 2026-12-16 05:00 UTC, ' +
      '1 late day left.'
  );
  assert.equal(ownDue({ due: '2026-12-16T05:00:00Z', late_days_left: null }), ' Due 2026-12-16 05:00 UTC.');
  assert.equal(ownDue({ due: '2026-12-16T05:00:00Z', late_days_left: 0 }), ' Due 2026-12-16 05:00 UTC, 0 late days left.');
  assert.equal(ownDue({ due: null, late_days_left: 2 }), '');
  assert.equal(ownDue(answer({})), ''); // a service without the course's term
});

test('a message too long for the toast names fewer functions, then shortens the due date: never cut mid-word', () => {
  const lost = ['attention', 'causal_mask', 'softmax', 'split_heads'].map(f => ({ function: f, points: '0 of 4' }));
  const due = { due: '2026-12-16T05:00:00Z', late_days_left: 3 };
  const ends = ['stopped: attention waited 2 s without computing (sleep, input or a lock?)'];
  assert.equal(
    describe({ ...answer({ score: 12, lost, ends }), ...due }),
    'attention, your Submit of 14:02:11 UTC: checked, 12 points. Lost points: attention 0 of 4 and 3 more. ' +
      'Due 12-16 05:00 UTC, 3 late days left.'
  );
  const one = [{ function: 'attention', points: '4.4 of 8' }];
  assert.equal(
    describe({ ...answer({ score: '25.4 / 29', lost: one, received: '14:29:37 UTC' }), ...due }),
    'attention, your Submit of 14:29:37 UTC: checked, 25.4 / 29 points. Lost points: attention 4.4 of 8. ' +
      'Due 12-16 05:00 UTC, 3 late days left.'
  );
  const long = name => ({
    ...answer({ score: '125.75 / 129.5', lost: [{ function: name, points: '14.25 of 18.5' }] }),
    ...due
  });
  assert.equal(
    describe(long('a_longer_name')),
    'attention, your Submit of 14:02:11 UTC: checked, 125.75 / 129.5 points. Lost points: ' +
      'a_longer_name 14.25 of 18.5. Due 12-16 05:00 UTC.'
  );
  const longest = 'a_function_with_a_name_far_longer_than_most'; // not even the date fits: the verdict alone
  assert.equal(
    describe(long(longest)),
    `attention, your Submit of 14:02:11 UTC: checked, 125.75 / 129.5 points. Lost points: ${longest} 14.25 of 18.5.`
  );
  for (const said of [describe({ ...answer({ score: 12, lost, ends }), ...due })]) {
    assert.ok(said.length <= TOAST, said);
  }
  const whole = describe(answer({ score: 12, lost, ends })); // no due date: the verdict whole (JupyterLab cuts it)
  assert.ok(whole.endsWith(`split_heads 0 of 4. Cut short: ${ends[0]}.`), whole);
});
