CREATE SEQUENCE authors_id START 3;
CREATE SEQUENCE books_id START 4;
CREATE SEQUENCE members_id START 3;
CREATE TABLE authors (id INTEGER PRIMARY KEY DEFAULT nextval('authors_id'), name VARCHAR NOT NULL, country VARCHAR NOT NULL);
CREATE TABLE books (id INTEGER PRIMARY KEY DEFAULT nextval('books_id'), title VARCHAR NOT NULL,
                    author_id INTEGER NOT NULL REFERENCES authors(id), year INTEGER NOT NULL, copies INTEGER NOT NULL);
CREATE TABLE members (id INTEGER PRIMARY KEY DEFAULT nextval('members_id'), name VARCHAR NOT NULL, city VARCHAR NOT NULL);
INSERT INTO authors VALUES (1, 'Chinua Achebe', 'Nigeria'), (2, 'Italo Calvino', 'Italy');
INSERT INTO books VALUES (1, 'Things Fall Apart', 1, 1958, 4), (2, 'Invisible Cities', 2, 1972, 1),
                         (3, 'The Baron in the Trees', 2, 1957, 2);
INSERT INTO members VALUES (1, 'Nora Lindqvist', 'Uppsala'), (2, 'Kwame Mensah', 'Accra');
