CREATE SEQUENCE writers_id START 3;
CREATE SEQUENCE books_id START 4;
CREATE SEQUENCE patrons_id START 3;
CREATE SEQUENCE loans_id START 3;
CREATE TABLE writers (id INTEGER PRIMARY KEY DEFAULT nextval('writers_id'), name VARCHAR NOT NULL, country VARCHAR NOT NULL);
CREATE TABLE books (id INTEGER PRIMARY KEY DEFAULT nextval('books_id'), title VARCHAR NOT NULL,
                    written_by INTEGER NOT NULL REFERENCES writers(id), year INTEGER NOT NULL);
CREATE TABLE patrons (id INTEGER PRIMARY KEY DEFAULT nextval('patrons_id'), name VARCHAR NOT NULL, city VARCHAR NOT NULL);
CREATE TABLE loans (id INTEGER PRIMARY KEY DEFAULT nextval('loans_id'), borrower INTEGER NOT NULL REFERENCES patrons(id),
                    item INTEGER NOT NULL REFERENCES books(id), due VARCHAR NOT NULL);
INSERT INTO writers VALUES (1, 'Chinua Achebe', 'Nigeria'), (2, 'Italo Calvino', 'Italy');
INSERT INTO books VALUES (1, 'Things Fall Apart', 1, 1958), (2, 'Invisible Cities', 2, 1972),
                         (3, 'The Baron in the Trees', 2, 1957);
INSERT INTO patrons VALUES (1, 'Nora Lindqvist', 'Uppsala'), (2, 'Kwame Mensah', 'Accra');
INSERT INTO loans VALUES (1, 1, 2, '2026-12-20'), (2, 2, 1, '2026-12-22');
