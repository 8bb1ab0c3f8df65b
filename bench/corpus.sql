-- Realistic agent statements for the language-overhead benchmark (bench/language.py).
-- One request per line (a line may be a ';' batch); lines starting with '--' are comments.
-- The mix follows what an agent sends in a session: discovery, paged reads with filters,
-- aggregates for a summary, then small writes by id.
SHOW TABLES
DESCRIBE cards
DESCRIBE review_events
SHOW COLUMNS FROM decks
SELECT * FROM workspace
SELECT * FROM cards LIMIT 20
SELECT card_id, front_text, back_text FROM cards ORDER BY created_at DESC LIMIT 20 OFFSET 40
SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0
SELECT * FROM cards WHERE tags OVERLAP ('english', 'grammar') AND effort_level IN ('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0
SELECT card_id, front_text, tags FROM cards WHERE tags CONTAINS ('spanish', 'verbs') LIMIT 50
SELECT card_id, front_text FROM cards WHERE 'biology' = ANY(tags) ORDER BY front_text
SELECT card_id, front_text, due_at FROM cards WHERE due_at <= NOW() ORDER BY due_at LIMIT 20
SELECT COUNT(*) AS due_now FROM cards WHERE due_at <= NOW()
SELECT card_id, front_text FROM cards WHERE due_at BETWEEN NOW() AND NOW() + INTERVAL '1 day' ORDER BY due_at
SELECT card_id, front_text, back_text FROM cards WHERE MATCH('photosynthesis') LIMIT 20
SELECT card_id, front_text FROM cards WHERE front_text ILIKE '%irregular verb%' OR back_text ILIKE '%irregular verb%'
SELECT card_id, front_text FROM cards WHERE LOWER(front_text) LIKE 'what is%' LIMIT 10
SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC LIMIT 20 OFFSET 0
SELECT rating, COUNT(*) AS reviews FROM review_events GROUP BY rating ORDER BY reviews DESC LIMIT 10 OFFSET 0
SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade ORDER BY total_reviews DESC LIMIT 10 OFFSET 0
SELECT COUNT(*) FROM cards
SELECT effort_level, COUNT(*) AS n, AVG(reps) AS avg_reps FROM cards GROUP BY effort_level ORDER BY n DESC
SELECT fsrs_card_state, COUNT(*) FROM cards GROUP BY fsrs_card_state
SELECT DATE(reviewed_at_client) AS day, COUNT(*) AS reviews FROM review_events WHERE reviewed_at_client > NOW() - INTERVAL '30 days' GROUP BY day ORDER BY day DESC
SELECT card_id, COUNT(*) AS lapses_seen FROM review_events WHERE rating = 0 GROUP BY card_id HAVING COUNT(*) >= 2 ORDER BY lapses_seen DESC LIMIT 20
SELECT card_id, front_text, lapses, fsrs_difficulty FROM cards WHERE lapses >= 3 ORDER BY fsrs_difficulty DESC NULLS LAST LIMIT 25
SELECT card_id, front_text FROM cards WHERE fsrs_card_state IN ('learning', 'relearning') AND due_at < NOW() + INTERVAL '2 hours'
SELECT card_id, front_text FROM cards WHERE fsrs_card_state = 'new' AND tags OVERLAP ('french') LIMIT 20
SELECT card_id, front_text FROM cards WHERE updated_at > NOW() - INTERVAL '7 days' ORDER BY updated_at DESC LIMIT 50
SELECT card_id, front_text FROM cards WHERE created_at >= '2026-01-01' AND created_at < '2026-02-01T00:00:00Z'
SELECT * FROM review_events WHERE card_id = '123e4567-e89b-42d3-a456-426614174000' ORDER BY reviewed_at_client DESC
SELECT * FROM cards WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000', '123e4567-e89b-42d3-a456-426614174001', '123e4567-e89b-42d3-a456-426614174002')
SELECT tag FROM cards WHERE tag LIKE 'eng%' GROUP BY tag
SELECT t, COUNT(*) AS n FROM cards UNNEST tags AS t WHERE effort_level = 'long' GROUP BY t HAVING COUNT(*) > 3 ORDER BY n DESC
SELECT DISTINCT card_type FROM cards
SELECT * FROM decks ORDER BY name
SELECT deck_id, name FROM decks WHERE effort_levels CONTAINS ('fast') OR tags OVERLAP ('english')
SELECT * FROM decks WHERE MATCH('grammar')
SELECT card_id, front_text FROM cards WHERE (reps = 0 OR lapses > 2) AND effort_level = 'fast' AND NOT tags OVERLAP ('archived') LIMIT 30
SELECT MIN(due_at) AS next_due, MAX(fsrs_last_reviewed_at) AS last_review, SUM(reps) AS total_reps FROM cards
SELECT card_id, front_text FROM cards ORDER BY RANDOM() LIMIT 5
SELECT card_id, front_text, tags FROM cards WHERE tags = () LIMIT 20
INSERT INTO cards (front_text, back_text, tags, effort_level) VALUES ('What is the past tense of "go"?', 'went', ('english', 'verbs'), 'fast')
INSERT INTO cards (front_text, back_text, tags) VALUES ('hablar', 'to speak', ('spanish', 'verbs')), ('comer', 'to eat', ('spanish', 'verbs')), ('vivir', 'to live', ('spanish', 'verbs')) RETURNING card_id, front_text
INSERT INTO cards (front_text, back_text, card_type, effort_level) VALUES ('Explain the Krebs cycle in three steps.', 'Acetyl-CoA enters; NADH and FADH2 form; oxaloacetate is regenerated.', 'basic', 'long')
INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', ('medium', 'long'), ('english', 'grammar'))
UPDATE cards SET back_text = 'Updated answer' WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'
UPDATE cards SET back_text = 'Updated answer', tags = ('english', 'verbs') WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'
UPDATE cards SET effort_level = 'medium' WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000', '123e4567-e89b-42d3-a456-426614174001') RETURNING card_id, effort_level, updated_at
UPDATE cards SET tags = ('english', 'archived') WHERE tags OVERLAP ('obsolete') AND updated_at < NOW() - INTERVAL '1 year'
UPDATE decks SET name = 'Grammar (advanced)', tags = ('english', 'grammar', 'advanced') WHERE deck_id = '123e4567-e89b-42d3-a456-426614174009'
DELETE FROM cards WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000', '123e4567-e89b-42d3-a456-426614174001')
DELETE FROM cards WHERE tags OVERLAP ('duplicate') AND reps = 0 RETURNING card_id, front_text
DELETE FROM decks WHERE name = 'Old deck'
SELECT COUNT(*) FROM cards; SELECT COUNT(*) FROM decks; SELECT COUNT(*) FROM review_events
INSERT INTO decks (name) VALUES ('Spanish verbs'); UPDATE cards SET tags = ('spanish', 'verbs') WHERE card_id = '123e4567-e89b-42d3-a456-426614174003'
SELECT card_id, front_text, back_text, tags, effort_level, due_at, reps, lapses, fsrs_card_state, fsrs_stability FROM cards WHERE tags OVERLAP ('english') AND (effort_level = 'fast' OR due_at <= NOW()) AND fsrs_card_state != 'new' AND front_text NOT LIKE '%TODO%' ORDER BY due_at ASC NULLS LAST, updated_at DESC LIMIT 100 OFFSET 200
