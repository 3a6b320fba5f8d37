// placeholder until the allocator entry points land
