-- The seed of the published DuckDB server (mcp-server-duckdb): a lending library. Keys come from sequences, as a
-- DuckDB user writes them, so a row can be added without naming its id.
CREATE SEQUENCE authors_id START 4;
CREATE SEQUENCE books_id START 6;
CREATE SEQUENCE members_id START 4;
CREATE SEQUENCE loans_id START 5;
CREATE TABLE authors (id INTEGER PRIMARY KEY DEFAULT nextval('authors_id'), name VARCHAR NOT NULL, country VARCHAR NOT NULL);
CREATE TABLE books (id INTEGER PRIMARY KEY DEFAULT nextval('books_id'), title VARCHAR NOT NULL,
                    author_id INTEGER NOT NULL REFERENCES authors(id), year INTEGER NOT NULL, copies INTEGER NOT NULL);
CREATE TABLE members (id INTEGER PRIMARY KEY DEFAULT nextval('members_id'), name VARCHAR NOT NULL, email VARCHAR NOT NULL,
                      city VARCHAR NOT NULL);
CREATE TABLE loans (id INTEGER PRIMARY KEY DEFAULT nextval('loans_id'), book_id INTEGER NOT NULL REFERENCES books(id),
                    member_id INTEGER NOT NULL REFERENCES members(id), status VARCHAR NOT NULL);
INSERT INTO authors VALUES (1, 'Ursula K. Le Guin', 'United States'), (2, 'Chinua Achebe', 'Nigeria'),
                           (3, 'Italo Calvino', 'Italy');
INSERT INTO books VALUES (1, 'A Wizard of Earthsea', 1, 1968, 3), (2, 'The Dispossessed', 1, 1974, 2),
                         (3, 'Things Fall Apart', 2, 1958, 4), (4, 'Invisible Cities', 3, 1972, 1),
                         (5, 'If on a winter''s night a traveler', 3, 1979, 2);
INSERT INTO members VALUES (1, 'Nora Lindqvist', 'nora@example.com', 'Uppsala'), (2, 'Kwame Mensah', 'kwame@example.com', 'Accra'),
                           (3, 'Lucia Ferri', 'lucia@example.com', 'Turin');
INSERT INTO loans VALUES (1, 1, 1, 'returned'), (2, 3, 2, 'on loan'), (3, 4, 3, 'on loan'), (4, 2, 1, 'overdue');
