-- Statements that must parse and validate (tests/dsl/test_corpus.py).
-- Format: one statement, or a ';' batch, per line, then ' -- => ' and the expected
-- normalizedSql (batches: each statement's normalized text joined with '; ').
-- A lone '=' after the arrow means: the same text as the statement, trimmed.
-- Lines starting with '--' are comments; blank lines are skipped.

-- §10 headline examples
SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0 -- => =
UPDATE cards SET back_text = 'Updated answer' WHERE card_id = '123e4567-e89b-42d3-a456-426614174000' -- => =
SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC LIMIT 20 OFFSET 0 -- => =
SELECT rating, COUNT(*) AS reviews FROM review_events GROUP BY rating ORDER BY reviews DESC LIMIT 10 OFFSET 0 -- => =
SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade ORDER BY total_reviews DESC LIMIT 10 OFFSET 0 -- => =
SELECT * FROM cards WHERE tags OVERLAP ('english', 'grammar') AND effort_level IN ('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0 -- => =
INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', ('medium', 'long'), ('english', 'grammar')) -- => =
UPDATE cards SET back_text = 'Updated answer', tags = ('english', 'verbs') WHERE card_id = '123e4567-e89b-42d3-a456-426614174000' -- => =
DELETE FROM cards WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000', '123e4567-e89b-42d3-a456-426614174001') -- => =
-- Discovery
SHOW TABLES -- => =
show tables -- => =
SHOW TABLES LIKE 'c%' -- => =
SHOW TABLES LIKE '%_events' -- => =
DESCRIBE cards -- => =
DESC decks -- => =
describe review_events -- => =
SHOW COLUMNS FROM workspace -- => =
DESCRIBE "cards" -- => =
-- Lexical freedom
SELECT*FROM cards -- => =
SELECT * FROM cards WHERE(reps=0) -- => =
SELECT * FROM cards WHERE front_text='Hola'OR reps=0 -- => =
   SELECT   *   FROM   cards    -- => SELECT * FROM cards
SELECT * FROM cards; -- => SELECT * FROM cards
SELECT * FROM cards -- trailing comment -- => SELECT * FROM cards
/* leading comment */ SELECT * FROM cards -- => SELECT * FROM cards
SELECT /* inline */ card_id FROM cards -- => SELECT card_id FROM cards
select card_id, FRONT_TEXT from CARDS where REPS > 0 -- => =
SELECT "card_id", "Front_Text" FROM "cards" -- => =
SELECT * FROM cards WHERE front_text = 'it''s' -- => =
SELECT * FROM cards WHERE front_text = 'a;b -- not a comment' -- => =
SELECT * FROM cards WHERE front_text = '  two  spaces  ' -- => =
SELECT * FROM cards WHERE back_text = '' -- => =
SELECT * FROM cards WHERE front_text = 'back\slash' -- => =
SELECT * FROM cards WHERE front_text = 'ñandú 日本語 😀' -- => =
-- Comparisons and literals
SELECT * FROM cards WHERE reps = 12 -- => =
SELECT * FROM cards WHERE reps > -3 -- => =
SELECT * FROM cards WHERE reps > - 3 -- => =
SELECT * FROM cards WHERE fsrs_stability >= 0.5 -- => =
SELECT * FROM cards WHERE fsrs_difficulty < .5 -- => =
SELECT * FROM cards WHERE reps <= 1e3 -- => =
SELECT * FROM cards WHERE reps <> 0 -- => =
SELECT * FROM cards WHERE reps != 0 -- => =
SELECT * FROM workspace WHERE enable_fuzz = TRUE -- => =
SELECT * FROM workspace WHERE enable_fuzz = false -- => =
SELECT * FROM workspace WHERE desired_retention BETWEEN 0.8 AND 0.95 -- => =
SELECT * FROM workspace WHERE algorithm = 'fsrs-6' -- => =
SELECT * FROM cards WHERE card_id = '123E4567-E89B-42D3-A456-426614174000' -- => =
SELECT * FROM cards WHERE effort_level = 'long' -- => =
SELECT * FROM cards WHERE fsrs_card_state IN ('learning', 'relearning') -- => =
SELECT * FROM cards WHERE fsrs_card_state NOT IN ('new') -- => =
SELECT * FROM cards WHERE reps BETWEEN 1 AND 5 -- => =
SELECT * FROM cards WHERE reps NOT BETWEEN 1 AND 5 -- => =
SELECT * FROM cards WHERE due_at IS NULL -- => =
SELECT * FROM cards WHERE due_at IS NOT NULL -- => =
SELECT * FROM cards WHERE fsrs_step_index IS NULL -- => =
-- Datetimes
SELECT * FROM cards WHERE due_at < '2026-03-05' -- => =
SELECT * FROM cards WHERE due_at < '2026-03-05T10:00:00Z' -- => =
SELECT * FROM cards WHERE due_at < '2026-03-05T10:00:00.123Z' -- => =
SELECT * FROM cards WHERE due_at < '2026-03-05T10:00:00+02:00' -- => =
SELECT * FROM cards WHERE created_at BETWEEN '2026-01-01' AND '2026-02-01' -- => =
SELECT * FROM cards WHERE due_at <= NOW() -- => =
SELECT * FROM cards WHERE due_at <= CURRENT_TIMESTAMP -- => =
SELECT * FROM cards WHERE due_at < NOW() - INTERVAL '7 days' -- => =
SELECT * FROM cards WHERE due_at < NOW() + INTERVAL '1 day' -- => =
SELECT * FROM cards WHERE updated_at > NOW() - INTERVAL '30 minutes' -- => =
SELECT * FROM cards WHERE updated_at > NOW() - INTERVAL '2 hours' -- => =
SELECT * FROM cards WHERE updated_at > NOW() - INTERVAL '1 week' -- => =
SELECT * FROM cards WHERE updated_at > CURRENT_TIMESTAMP - INTERVAL '3 months' -- => =
SELECT * FROM review_events WHERE reviewed_at_client > NOW() - INTERVAL '1 year' -- => =
-- Strings and patterns
SELECT * FROM cards WHERE front_text LIKE 'Hol%' -- => =
SELECT * FROM cards WHERE front_text NOT LIKE '%x_' -- => =
SELECT * FROM cards WHERE back_text ILIKE '%hello%' -- => =
SELECT * FROM cards WHERE back_text NOT ILIKE 'a%' -- => =
SELECT * FROM cards WHERE card_id LIKE '123e%' -- => =
SELECT * FROM cards WHERE LOWER(front_text) = 'hola' -- => =
SELECT * FROM cards WHERE UPPER(front_text) != 'HOLA' -- => =
SELECT * FROM cards WHERE LOWER(card_type) IN ('basic', 'cloze') -- => =
SELECT * FROM cards WHERE LOWER(back_text) LIKE '%verb%' -- => =
SELECT * FROM cards WHERE MATCH('hola') -- => =
SELECT * FROM decks WHERE MATCH('grammar') -- => =
-- Arrays
SELECT * FROM cards WHERE tags CONTAINS ('english', 'verbs') -- => =
SELECT * FROM cards WHERE tags = ('english', 'verbs') -- => =
SELECT * FROM cards WHERE tags = () -- => =
SELECT * FROM cards WHERE tags OVERLAP ['english', 'spanish'] -- => =
SELECT * FROM cards WHERE tags OVERLAP ARRAY['english'] -- => =
SELECT * FROM cards WHERE tags OVERLAP '{english,spanish}' -- => =
SELECT * FROM cards WHERE 'english' = ANY(tags) -- => =
SELECT * FROM decks WHERE effort_levels CONTAINS ('fast') -- => =
SELECT * FROM decks WHERE tags = () -- => =
-- Boolean structure
SELECT * FROM cards WHERE reps = 0 OR lapses > 2 AND effort_level = 'fast' -- => =
SELECT * FROM cards WHERE (reps = 0 OR lapses > 2) AND effort_level = 'fast' -- => =
SELECT * FROM cards WHERE NOT reps = 0 -- => =
SELECT * FROM cards WHERE NOT (reps = 0 AND lapses = 0) -- => =
SELECT * FROM cards WHERE NOT NOT reps = 0 -- => =
SELECT * FROM cards WHERE ((((reps = 0)))) -- => =
-- Select lists, grouping, ordering
SELECT card_id, front_text FROM cards -- => =
SELECT card_id AS id, front_text question FROM cards -- => =
SELECT DISTINCT effort_level FROM cards -- => =
SELECT DISTINCT effort_level, fsrs_card_state FROM cards ORDER BY effort_level, fsrs_card_state -- => =
SELECT COUNT(*) FROM cards -- => =
SELECT COUNT(*) AS total FROM cards WHERE due_at <= NOW() -- => =
SELECT COUNT(DISTINCT tag) FROM cards -- => =
SELECT COUNT(due_at), SUM(reps), AVG(fsrs_stability), MIN(due_at), MAX(updated_at) FROM cards -- => =
SELECT MIN(front_text), MAX(card_id) FROM cards -- => =
SELECT effort_level, COUNT(*) FROM cards GROUP BY effort_level -- => =
SELECT effort_level, COUNT(*) FROM cards GROUP BY effort_level ORDER BY count DESC -- => =
SELECT effort_level, AVG(reps) AS avg_reps FROM cards GROUP BY effort_level HAVING AVG(reps) > 1 -- => =
SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag HAVING n >= 5 ORDER BY n DESC, tag -- => =
SELECT tag FROM cards WHERE tag LIKE 'eng%' -- => =
SELECT card_id, tag FROM cards ORDER BY tag -- => =
SELECT t, COUNT(*) FROM cards UNNEST tags AS t GROUP BY t -- => =
SELECT * FROM cards UNNEST tags AS t WHERE t = 'english' -- => =
SELECT DATE(created_at) AS day, COUNT(*) FROM cards GROUP BY day ORDER BY day -- => =
SELECT DATE(reviewed_at_client), COUNT(*) FROM review_events GROUP BY DATE(reviewed_at_client) -- => =
SELECT review_grade, COUNT(*) FROM review_events WHERE reviewed_at_server > NOW() - INTERVAL '7 days' GROUP BY review_grade -- => =
SELECT * FROM cards ORDER BY due_at ASC NULLS LAST -- => =
SELECT * FROM cards ORDER BY due_at DESC NULLS FIRST, card_id -- => =
SELECT * FROM cards ORDER BY RANDOM() LIMIT 5 -- => =
SELECT * FROM cards ORDER BY DATE(created_at) DESC -- => =
SELECT * FROM cards LIMIT 1000 -- => =
SELECT * FROM cards OFFSET 20 LIMIT 10 -- => =
SELECT * FROM cards LIMIT 1e2 -- => =
SELECT * FROM cards OFFSET 0 -- => =
SELECT * FROM decks ORDER BY name -- => =
SELECT * FROM review_events WHERE card_id = '123e4567-e89b-42d3-a456-426614174000' ORDER BY reviewed_at_client DESC -- => =
SELECT * FROM workspace -- => =
-- Writes
INSERT INTO cards (front_text, back_text) VALUES ('hola', 'hello') -- => =
INSERT INTO cards (front_text, back_text, tags, effort_level, card_type) VALUES ('hola', 'hello', ('spanish'), 'medium', 'basic') -- => =
INSERT INTO cards (back_text, front_text) VALUES ('a1', 'q1'), ('a2', 'q2'), ('a3', 'q3') -- => =
INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', []) RETURNING * -- => =
INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', ARRAY['x', 'y']) RETURNING card_id, tags -- => =
INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', '{x,y}') -- => =
INSERT INTO decks (name) VALUES ('Everything') -- => =
INSERT INTO decks (name, effort_levels) VALUES ('Quick', ('fast')) -- => =
UPDATE cards SET effort_level = 'long' WHERE tags OVERLAP ('hard') -- => =
UPDATE cards SET tags = () WHERE card_id = '123e4567-e89b-42d3-a456-426614174000' RETURNING card_id, tags -- => =
UPDATE decks SET name = 'Renamed', tags = ('a', 'b') WHERE deck_id = '123e4567-e89b-42d3-a456-426614174000' -- => =
DELETE FROM decks WHERE name = 'Old' -- => =
DELETE FROM cards WHERE reps = 0 AND created_at < '2026-01-01' RETURNING * -- => =
-- Batches
SHOW TABLES; DESCRIBE cards -- => =
SELECT COUNT(*) FROM cards; SELECT COUNT(*) FROM decks; -- => SELECT COUNT(*) FROM cards; SELECT COUNT(*) FROM decks
INSERT INTO decks (name) VALUES ('a'); UPDATE decks SET name = 'b' WHERE name = 'a'; DELETE FROM decks WHERE name = 'b' -- => =
