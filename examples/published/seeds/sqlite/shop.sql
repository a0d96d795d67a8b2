CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL, stock INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL, status TEXT NOT NULL);
INSERT INTO customers VALUES (1, 'Alice Martin', 'alice@example.com', 'Lyon'), (2, 'Bob Chen', 'bob@example.com', 'Toronto'),
                             (3, 'Carla Diaz', 'carla@example.com', 'Madrid');
INSERT INTO products VALUES (1, 'Espresso machine', 249.0, 12), (2, 'Coffee grinder', 89.5, 30), (3, 'Milk frother', 35.0, 0),
                            (4, 'Paper filters', 4.25, 200);
INSERT INTO orders VALUES (1, 1, 1, 1, 'shipped'), (2, 1, 4, 3, 'delivered'), (3, 2, 2, 1, 'pending'), (4, 3, 3, 2, 'cancelled');
