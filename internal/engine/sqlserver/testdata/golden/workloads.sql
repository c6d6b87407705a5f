-- credit-top1
SELECT TOP (1) m.member_no, m.lastname, p.payment_no, p.payment_dt, p.payment_amt FROM payment p JOIN member m ON m.member_no = p.member_no /* obsbench-credit-top1 */;

-- inserts-autocommit
-- set-up
IF OBJECT_ID(N'obsbench_inserts', N'U') IS NULL CREATE TABLE obsbench_inserts (v bigint NOT NULL);
INSERT INTO obsbench_inserts (v) VALUES (@p1) /* obsbench-inserts */;

-- inserts-batched
-- set-up
IF OBJECT_ID(N'obsbench_inserts', N'U') IS NULL CREATE TABLE obsbench_inserts (v bigint NOT NULL);
INSERT INTO obsbench_inserts (v) VALUES (@p1) /* obsbench-inserts */;
BEGIN TRANSACTION;
COMMIT TRANSACTION;

-- thousand-point
SELECT c1, c2, c3 FROM tab72 WHERE c1 = @p1 /* obsbench-tab72 point */;

-- thousand-range
SELECT c1, c2, c3 FROM tab72 WHERE c3 LIKE '%SQLWorkshops%' AND c1 BETWEEN 1 AND 10 /* obsbench-tab72 range */;

