import {apiError} from '../../src/api/api-error';
import {bodyExcerpt, describeProblem, parseProblemDetails} from '../../src/api/problem-details';
import {failureTypeOf} from '../../src/core/errors';
import {AxiosError, AxiosHeaders} from 'axios';

function axiosFailure(status: number, data: unknown): AxiosError {
  const config = {headers: new AxiosHeaders({Authorization: 'Bearer SECRET-TOKEN-123'}), url: '/v1/quests/q/exports'};
  return new AxiosError(
    'Request failed',
    'ERR_BAD_RESPONSE',
    config,
    {},
    {status, statusText: '', data, headers: {}, config}
  );
}

describe('problem details', () => {
  const validation = {
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
    title: 'One or more validation errors occurred.',
    status: 400,
    errors: {
      'settings.language': ["Language 'xx' is not defined on the quest"],
      'filter.since': ['must not lie in the future'],
    },
    traceId: '00-abc-def-01',
    requestId: 'req-1',
  };

  test('a validation error keeps its errors map and ids', () => {
    const p = parseProblemDetails(JSON.stringify(validation));
    expect(p?.errors).toEqual(validation.errors);
    expect(p?.traceId).toBe('00-abc-def-01');
    expect(describeProblem(p)).toBe(
      "One or more validation errors occurred. - validation errors: settings.language: Language 'xx' is not defined on the quest | filter.since: must not lie in the future"
    );
  });

  test('an OAuth error body is understood too', () => {
    expect(
      describeProblem(parseProblemDetails({error: 'invalid_client', error_description: 'client authentication failed'}))
    ).toBe('client authentication failed');
  });

  test('HTML, empty and non-object bodies are not problem details, and HTML gives its title', () => {
    expect(parseProblemDetails('<html><title>502 Bad Gateway</title></html>')).toBeUndefined();
    expect(parseProblemDetails('')).toBeUndefined();
    expect(parseProblemDetails('[1,2]')).toBeUndefined();
    expect(parseProblemDetails(undefined)).toBeUndefined();
    expect(bodyExcerpt('<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>')).toBe(
      '502 Bad Gateway'
    );
  });

  test('an HTTP failure becomes a message with status, explanation, ids and advice, and no header', () => {
    const err = apiError(axiosFailure(400, validation), {operation: 'Creating an export', questId: 'q-1'});
    expect(err.message).toContain('Creating an export for quest q-1 failed: HTTP 400');
    expect(err.message).toContain("settings.language: Language 'xx' is not defined on the quest");
    expect(err.message).toContain('traceId 00-abc-def-01, requestId req-1');
    expect(err.message).not.toContain('SECRET-TOKEN-123');
    expect(failureTypeOf(err)).toBe('config_error');
  });

  test.each([
    [401, 'config_error', 'check client_id, client_secret and project_id'],
    [403, 'config_error', 'has no permission for this quest'],
    [404, 'config_error', 'quest was not found: check its id in quest_ids'],
    [410, 'transient_error', 'gone'],
    [429, 'transient_error', 'throttling'],
    [503, 'transient_error', 'usually temporary'],
  ])('HTTP %i is a %s that says what to do', (status, type, hint) => {
    const err = apiError(axiosFailure(status, {detail: 'x', traceId: 't'}), {
      operation: 'Checking access',
      questId: 'q-1',
    });
    expect(failureTypeOf(err)).toBe(type);
    expect(err.message).toContain(hint);
  });
});
