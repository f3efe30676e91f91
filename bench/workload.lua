-- workload.lua: a mixed Lua workload for the overhead benchmark:
-- recursion, closures, string building, table sort and a hash table.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local acc = 0
for _ = 1, 6 do acc = acc + fib(24) end
local t = {}
for i = 1, 200000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
local parts = {}
for i = 1, 100000 do parts[#parts + 1] = string.format("%d:%s", i, tostring(i * 3)) end
local s = table.concat(parts, ",")
local words = {}
for w in s:gmatch("%d+") do words[w] = (words[w] or 0) + 1 end
local function counter() local c = 0; return function() c = c + 1; return c end end
local f = counter()
for _ = 1, 1000000 do f() end
print(acc, #t, #s, f())
