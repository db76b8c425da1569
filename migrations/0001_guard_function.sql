-- A guarded write in a non-interactive transaction (one db.batch) aborts the whole batch when the state it
-- decided on has changed meanwhile: `select guard(<condition>, 'name')` raises, and the request re-runs its
-- read-decide-write. SQLSTATE P0001 with message 'guard failed: <name>'.
CREATE OR REPLACE FUNCTION guard(ok boolean, name text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'guard failed: %', name USING ERRCODE = 'P0001';
  END IF;
  RETURN true;
END;
$$;
